package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// clock is an injected clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// usageOf returns the usage a stream's message_start reported.
func usageOf(t testing.TB, res result) Usage {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
	evs, err := readSSE(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	var u Usage
	raw, _ := json.Marshal(decode(t, evs).Start["usage"])
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatal(err)
	}
	u.OutputTokens = 0
	return u
}

// cachedBody is a request with breakpoints after the tools, the system
// prompt and the last message; each part is over 1024 tokens.
func cachedBody(system, toolDesc string, msgs ...map[string]any) map[string]any {
	b := body(msgs...)
	b["system"] = []any{map[string]any{"type": "text", "text": system, "cache_control": cc()}}
	b["tools"] = []any{map[string]any{"name": "Read", "description": toolDesc, "input_schema": map[string]any{"type": "object"}, "cache_control": cc()}}
	return b
}

func markedUser(s string) map[string]any {
	return user([]any{map[string]any{"type": "text", "text": s, "cache_control": cc()}})
}

var (
	longSystem = "You are a careful assistant. " + strings.Repeat("Follow the rules. ", 300)
	longTools  = "Reads a file. " + strings.Repeat("Use absolute paths. ", 300)
	longUser   = "Please review this code:\n" + strings.Repeat("func f() {}\n", 500)
)

func TestCacheRepeatedRequestReadsPrefix(t *testing.T) {
	srv := start(t, Config{Now: newClock().Now})
	c := httpClient(t)
	b := cachedBody(longSystem, longTools, markedUser(longUser))
	total := countTokens(t, c, srv, b)

	first := usageOf(t, call(t, c, srv.URL, "/v1/messages", b))
	if first.CacheReadInputTokens != 0 || first.CacheCreationInputTokens != total || first.InputTokens != 0 {
		t.Errorf("first request: %+v, want everything (%d) written", first, total)
	}
	second := usageOf(t, call(t, c, srv.URL, "/v1/messages", b))
	if diff := cmp.Diff(Usage{CacheReadInputTokens: total}, second); diff != "" {
		t.Errorf("repeat (-want +got):\n%s", diff)
	}

	// The next turn reads the old prefix and writes only the new part.
	next := cachedBody(longSystem, longTools, user(longUser), assistant("Looks fine."), markedUser("Now the tests, please."))
	third := usageOf(t, call(t, c, srv.URL, "/v1/messages", next))
	grown := countTokens(t, c, srv, next)
	if diff := cmp.Diff(Usage{CacheReadInputTokens: total, CacheCreationInputTokens: grown - total}, third); diff != "" {
		t.Errorf("next turn (-want +got):\n%s", diff)
	}
	st := srv.CacheStats()
	if st.Hits != 2 || st.Misses != 1 || st.ReadTokens != int64(total+third.CacheReadInputTokens) {
		t.Errorf("stats %+v", st)
	}
}

// countTokens asks the server for the request's size.
func countTokens(t testing.TB, c *http.Client, srv *Server, b map[string]any) int {
	t.Helper()
	res := call(t, c, srv.URL, "/v1/messages/count_tokens", with(b, "stream", nil, "max_tokens", nil))
	var out struct {
		InputTokens int `json:"input_tokens"`
	}
	if res.Status != 200 || json.Unmarshal(res.Body, &out) != nil || out.InputTokens == 0 {
		t.Fatalf("count_tokens: %d %s", res.Status, res.Body)
	}
	return out.InputTokens
}

func TestCacheOneByteChangeInvalidates(t *testing.T) {
	c := httpClient(t)
	base := cachedBody(longSystem, longTools, markedUser(longUser))
	flip := func(s string) string { return s[:len(s)-2] + "X" + s[len(s)-1:] }

	tests := []struct {
		name     string
		changed  map[string]any
		readTool bool // the tools prefix is still readable
	}{
		{"system prompt", cachedBody(flip(longSystem), longTools, markedUser(longUser)), true},
		{"tool list", cachedBody(longSystem, flip(longTools), markedUser(longUser)), false},
		{"model", with(base, "model", "claude-other"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, Config{Now: newClock().Now})
			full := usageOf(t, call(t, c, srv.URL, "/v1/messages", base)).CacheCreationInputTokens
			got := usageOf(t, call(t, c, srv.URL, "/v1/messages", tt.changed))
			// A request that shares nothing but the tools reads exactly the
			// tools prefix.
			control := usageOf(t, call(t, c, srv.URL, "/v1/messages", cachedBody("Another prompt. "+longSystem, longTools, markedUser(longUser))))
			want := 0
			if tt.readTool {
				want = control.CacheReadInputTokens
				if want == 0 || want >= full/2 {
					t.Fatalf("tools prefix %d tokens of %d: test setup is wrong", want, full)
				}
			}
			if got.CacheReadInputTokens != want {
				t.Errorf("after changing the %s: read %d tokens, want %d (whole prefix %d)", tt.name, got.CacheReadInputTokens, want, full)
			}
			if got.CacheCreationInputTokens+got.CacheReadInputTokens != full && tt.name != "model" {
				t.Errorf("after changing the %s: %+v does not add up to %d", tt.name, got, full)
			}
		})
	}
}

func TestCacheTTL(t *testing.T) {
	clk := newClock()
	srv := start(t, Config{Now: clk.Now})
	c := httpClient(t)
	b := cachedBody(longSystem, longTools, markedUser(longUser))
	read := func() int { return usageOf(t, call(t, c, srv.URL, "/v1/messages", b)).CacheReadInputTokens }

	read() // write
	clk.Advance(4 * time.Minute)
	if read() == 0 {
		t.Fatal("entry expired before its TTL")
	}
	clk.Advance(4 * time.Minute) // 8 min after the write, 4 after the hit refreshed it
	if read() == 0 {
		t.Fatal("a hit did not refresh the TTL")
	}
	clk.Advance(5*time.Minute + time.Second)
	if got := read(); got != 0 {
		t.Fatalf("read %d tokens from an expired entry", got)
	}
	if got := read(); got == 0 {
		t.Fatal("the miss did not write the prefix again")
	}

	// A "1h" breakpoint outlives the 5-minute default.
	long := markedUser(longUser)
	long["content"].([]any)[0].(map[string]any)["cache_control"] = map[string]any{"type": "ephemeral", "ttl": "1h"}
	hb := body(long)
	usageOf(t, call(t, c, srv.URL, "/v1/messages", hb))
	clk.Advance(30 * time.Minute)
	if usageOf(t, call(t, c, srv.URL, "/v1/messages", hb)).CacheReadInputTokens == 0 {
		t.Error("a 1h entry expired after 30 minutes")
	}
}

// blocksBody is one user message of n text blocks, each about 100 tokens,
// with a breakpoint on block bp.
func blocksBody(n, bp int) map[string]any {
	var blocks []any
	for i := range n {
		b := map[string]any{"type": "text", "text": fmt.Sprintf("block %02d %s", i, strings.Repeat("z", 400))}
		if i == bp {
			b["cache_control"] = cc()
		}
		blocks = append(blocks, b)
	}
	return body(user(blocks))
}

func TestCacheLookBack(t *testing.T) {
	tests := []struct {
		name     string
		laterBP  int
		wantRead bool
	}{
		{"same block", 14, true},
		{"20 blocks later", 14 + 20, true},
		{"21 blocks later", 14 + 21, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, Config{Now: newClock().Now})
			c := httpClient(t)
			first := usageOf(t, call(t, c, srv.URL, "/v1/messages", blocksBody(15, 14)))
			if first.CacheCreationInputTokens == 0 {
				t.Fatalf("first request wrote nothing: %+v", first)
			}
			got := usageOf(t, call(t, c, srv.URL, "/v1/messages", blocksBody(40, tt.laterBP)))
			if (got.CacheReadInputTokens == first.CacheCreationInputTokens) != tt.wantRead || (!tt.wantRead && got.CacheReadInputTokens != 0) {
				t.Errorf("read %d tokens, first wrote %d, want hit=%v", got.CacheReadInputTokens, first.CacheCreationInputTokens, tt.wantRead)
			}
		})
	}
}

func TestCacheParallelRequestsDoNotReadEachOther(t *testing.T) {
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	var calls sync.Mutex
	n := 0
	policy := func(r *Request) Reply {
		calls.Lock()
		n++
		first := n <= 2
		calls.Unlock()
		if first { // hold both first requests before their first token
			arrived <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		return TextReply("ok")
	}
	srv := start(t, Config{Policy: policy, Now: newClock().Now})
	c := httpClient(t)
	b := cachedBody(longSystem, longTools, markedUser(longUser))
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Go(func() { results[i] = call(t, c, srv.URL, "/v1/messages", b) })
	}
	<-arrived
	<-arrived
	close(release)
	wg.Wait()
	for i, res := range results {
		if u := usageOf(t, res); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens == 0 {
			t.Errorf("parallel request %d: %+v, want a miss that writes", i, u)
		}
	}
	if u := usageOf(t, call(t, c, srv.URL, "/v1/messages", b)); u.CacheReadInputTokens == 0 {
		t.Errorf("a later request did not read: %+v", u)
	}
}

func TestCacheMinimumLength(t *testing.T) {
	tests := []struct {
		name      string
		min       int
		text      string
		wantCache bool
	}{
		{"below default minimum", 0, strings.Repeat("a", 4000), false}, // ~1000 tokens < 1024
		{"above default minimum", 0, strings.Repeat("a", 4400), true},
		{"custom minimum", 2000, strings.Repeat("a", 4400), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, Config{Now: newClock().Now, Cache: CacheConfig{MinTokens: tt.min}})
			c := httpClient(t)
			b := body(markedUser(tt.text))
			first := usageOf(t, call(t, c, srv.URL, "/v1/messages", b))
			second := usageOf(t, call(t, c, srv.URL, "/v1/messages", b))
			cached := first.CacheCreationInputTokens > 0 && second.CacheReadInputTokens > 0
			if cached != tt.wantCache {
				t.Errorf("first %+v, second %+v, want cached=%v", first, second, tt.wantCache)
			}
			if !tt.wantCache && (first.InputTokens == 0 || second.InputTokens != first.InputTokens) {
				t.Errorf("uncached tokens not reported as input: %+v %+v", first, second)
			}
		})
	}
}

func TestCacheDisabled(t *testing.T) {
	srv := start(t, Config{Cache: CacheConfig{Disabled: true}})
	c := httpClient(t)
	b := cachedBody(longSystem, longTools, markedUser(longUser))
	for range 2 {
		if u := usageOf(t, call(t, c, srv.URL, "/v1/messages", b)); u.CacheReadInputTokens+u.CacheCreationInputTokens != 0 || u.InputTokens == 0 {
			t.Errorf("disabled cache reported %+v", u)
		}
	}
}

func TestCacheTopLevelMarker(t *testing.T) {
	srv := start(t, Config{Now: newClock().Now})
	c := httpClient(t)
	b := with(body(user(longUser)), "cache_control", cc())
	first := usageOf(t, call(t, c, srv.URL, "/v1/messages", b))
	second := usageOf(t, call(t, c, srv.URL, "/v1/messages", b))
	if first.CacheCreationInputTokens == 0 || second.CacheReadInputTokens != first.CacheCreationInputTokens {
		t.Errorf("automatic caching: first %+v second %+v", first, second)
	}
}
