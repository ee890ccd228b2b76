package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoutes(t *testing.T) {
	srv := start(t, Config{})
	c := httpClient(t)
	tests := []struct {
		method, path string
		status       int
		errType      string
	}{
		{"POST", "/v1/chat/completions", 400, "invalid_request_error"},
		{"POST", "/v1/responses", 400, "invalid_request_error"},
		{"GET", "/v1/chat/completions", 405, "invalid_request_error"},
		{"POST", "/v1/unknown", 404, "not_found_error"},
		{"GET", "/v1/messages", 405, "invalid_request_error"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e wireErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tt.status || e.Error.Type != tt.errType || resp.Header.Get("request-id") == "" {
			t.Errorf("%s %s: %d %+v", tt.method, tt.path, resp.StatusCode, e)
		}
	}
}

func TestDefaultPolicyAndRecords(t *testing.T) {
	var logs []string
	var mu sync.Mutex
	srv := start(t, Config{RecordLimit: 2, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, fmt.Sprintf(f, a...))
	}})
	c := httpClient(t)
	for i := range 3 {
		res := call(t, c, srv.URL, "/v1/messages", body(user(fmt.Sprint("n", i))))
		evs, _ := readSSE(bytes.NewReader(res.Body))
		if d := decode(t, evs); d.Text[0] != "ok" || d.StopReason != "end_turn" {
			t.Errorf("default reply %+v", d)
		}
	}
	recs := srv.Requests()
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%d %s %s %d", r.Index, r.MessageID, r.Request.FirstUserText(), r.Status))
	}
	want := []string{
		"2 msg_fake00000000000000000002 n1 200",
		"3 msg_fake00000000000000000003 n2 200",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 3 || !strings.Contains(logs[0], "#1 POST /v1/messages -> 200") {
		t.Errorf("logs %q", logs)
	}
}

func TestNonStreaming(t *testing.T) {
	srv := start(t, Config{Policy: func(r *Request) Reply {
		if strings.Contains(r.LastUserText(), "cut") {
			return Reply{Fault: &Fault{Kind: CutConnection}}
		}
		if strings.Contains(r.LastUserText(), "fail") {
			return Reply{Fault: &Fault{Kind: StreamError}}
		}
		return Reply{Content: []Block{TextBlock("hi"), ToolUseBlock("toolu_x", "Read", map[string]string{"file_path": "/a"})}}
	}})
	c := httpClient(t)
	res := call(t, c, srv.URL, "/v1/messages", with(body(user("x")), "stream", nil))
	var msg struct {
		Type       string            `json:"type"`
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
	}
	if err := json.Unmarshal(res.Body, &msg); err != nil {
		t.Fatal(err)
	}
	var content []string
	for _, c := range msg.Content {
		content = append(content, string(c))
	}
	want := []string{`{"type":"text","text":"hi"}`, `{"type":"tool_use","id":"toolu_x","name":"Read","input":{"file_path":"/a"}}`}
	if diff := cmp.Diff(want, content); diff != "" || msg.StopReason != "tool_use" || msg.Type != "message" {
		t.Errorf("message %s; content (-want +got):\n%s", res.Body, diff)
	}
	if res := call(t, c, srv.URL, "/v1/messages", with(body(user("fail")), "stream", nil)); res.Status != 529 {
		t.Errorf("stream error without a stream: %d", res.Status)
	}
	if res := call(t, c, srv.URL, "/v1/messages", with(body(user("cut")), "stream", nil)); res.ReadErr == nil {
		t.Errorf("cut non-streaming response read cleanly: %s", res.Body)
	}
}

// TestManyConcurrentStreams holds 1,000 streams open at once (200 under the
// race detector, which costs ~0.7 MB and 10 ms of CPU per stream): every
// policy call waits until all requests have arrived, so they all stream
// together.
func TestManyConcurrentStreams(t *testing.T) {
	n := 1000
	if raceEnabled || testing.Short() {
		n = 200
	}
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	srv := start(t, Config{Policy: func(r *Request) Reply {
		arrived.Done()
		select {
		case <-all:
		case <-r.Context().Done():
		}
		return Reply{Content: []Block{TextBlock("reply to " + r.FirstUserText()), ToolUseBlock("", "Bash", map[string]string{"command": r.FirstUserText()})}}
	}})
	c := httpClient(t)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			q := fmt.Sprintf("q%04d", i)
			res := call(t, c, srv.URL, "/v1/messages", body(user(q)))
			evs, err := readSSE(bytes.NewReader(res.Body))
			if err != nil || res.ReadErr != nil {
				errs[i] = fmt.Sprint(err, res.ReadErr)
				return
			}
			d := decode(t, evs)
			if d.Text[0] != "reply to "+q || d.Text[1] != `{"command":"`+q+`"}` || !d.Stopped {
				errs[i] = fmt.Sprintf("%+v", d)
			}
		})
	}
	go func() { arrived.Wait(); close(all) }()
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("stream %d: %s", i, e)
		}
	}
}

// BenchmarkStream measures one complete streamed reply over loopback.
func BenchmarkStream(b *testing.B) {
	srv := start(b, Config{Policy: func(*Request) Reply { return longReply() }})
	c := httpClient(b)
	raw, _ := json.Marshal(body(user("bench")))
	for b.Loop() {
		req, _ := newRequest(b, srv.URL+"/v1/messages", raw)
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// BenchmarkCachePlan measures the cache simulator on a large conversation.
func BenchmarkCachePlan(b *testing.B) {
	raw, _ := json.Marshal(cachedBody(longSystem, longTools, user(longUser), assistant("ok"), markedUser("more")))
	req, e := decodeRequest(raw, false, nil)
	if e != nil {
		b.Fatal(e.message)
	}
	c := newCache(CacheConfig{}, newClock().Now)
	for b.Loop() {
		c.commit(c.plan(req))
	}
}

// BenchmarkConcurrentStreams runs 1,000 streams at once per iteration.
func BenchmarkConcurrentStreams(b *testing.B) {
	const n = 1000
	srv := start(b, Config{Policy: func(*Request) Reply { return longReply() }})
	c := httpClient(b)
	raw, _ := json.Marshal(body(user("bench")))
	for b.Loop() {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				req, _ := newRequest(b, srv.URL+"/v1/messages", raw)
				resp, err := c.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
	}
}

// TestContextWindow: a request over the configured window is refused as the
// API refuses it, before the policy sees it; one under it is answered.
func TestContextWindow(t *testing.T) {
	asked := 0
	srv := start(t, Config{ContextWindow: 1000, Policy: func(*Request) Reply { asked++; return TextReply("ok") }})
	c := httpClient(t)
	big := call(t, c, srv.URL, "/v1/messages", body(user(strings.Repeat("word ", 1000)))) // 5,000 bytes ≈ 1,250 tokens
	if big.Status != 400 || !strings.Contains(string(big.Body), "prompt is too long: ") || !strings.Contains(string(big.Body), "> 1000 maximum") {
		t.Fatalf("oversized request: status %d, body %s", big.Status, big.Body)
	}
	small := call(t, c, srv.URL, "/v1/messages", body(user(strings.Repeat("word ", 100))))
	if small.Status != 200 {
		t.Fatalf("small request: status %d, body %s", small.Status, small.Body)
	}
	if asked != 1 {
		t.Fatalf("the policy was asked %d times, want once (only for the request that fits)", asked)
	}
}
