package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a virtual clock: Sleep advances it at once, after an
// optional hook, and records each wait.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
	hook   func(now time.Time, d time.Duration) // called before the clock moves
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	c.mu.Lock()
	now, hook := c.t, c.hook
	c.mu.Unlock()
	if hook != nil {
		hook(now, d)
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	c.mu.Unlock()
	return ctx.Err() == nil
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// paceReply is a lead's fan-out: a sentence, then two Agent calls with
// 400-byte briefs.
func paceReply() Reply {
	brief := strings.Repeat("Check the parser's edge cases. ", 13)[:400]
	return Reply{Content: []Block{
		TextBlock("Starting two agents."),
		ToolUseBlock("", "Agent", map[string]any{"description": "first", "prompt": brief}),
		ToolUseBlock("", "Agent", map[string]any{"description": "second", "prompt": brief}),
	}}
}

// A paced stream waits the first-token delay, then exactly the content's
// bytes/4 at the rate, in steps the seeded splitting decides: the same
// request gives the same waits.
func TestPacedStreamWaitsForTheContent(t *testing.T) {
	reply := paceReply()
	var schedules [][]time.Duration
	for range 2 {
		clock := newFakeClock()
		srv := start(t, Config{Policy: func(*Request) Reply { return reply }, Now: clock.Now, Sleep: clock.Sleep,
			FirstTokenDelay: 500 * time.Millisecond, OutputTokensPerSecond: 100})
		res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("fan out")))
		evs, err := readSSE(strings.NewReader(string(res.Body)))
		if err != nil || res.Status != 200 {
			t.Fatalf("status %d, %v", res.Status, err)
		}
		if d := decode(t, evs); !d.Stopped || len(d.Blocks) != 3 {
			t.Fatalf("the stream is incomplete: %+v", d.Names)
		}
		waits := clock.waits()
		if len(waits) < 10 || waits[0] != 500*time.Millisecond {
			t.Fatalf("waits = %v; want the 500 ms first token, then many steps", waits)
		}
		var total time.Duration
		for _, w := range waits[1:] {
			total += w
		}
		n, _ := normalize(reply, [32]byte{})
		// 100 tokens a second at 4 bytes a token: 2.5 ms a byte.
		want := time.Duration(contentBytes(n)) * 2500 * time.Microsecond
		if diff := total - want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Errorf("the content took %s of waits, want %s (%d bytes at 100 tokens/s)", total, want, contentBytes(n))
		}
		schedules = append(schedules, waits)
	}
	if len(schedules[0]) != len(schedules[1]) {
		t.Fatalf("two runs paced differently: %d and %d waits", len(schedules[0]), len(schedules[1]))
	}
	for i := range schedules[0] {
		if schedules[0][i] != schedules[1][i] {
			t.Fatalf("wait %d differs between runs: %s and %s", i, schedules[0][i], schedules[1][i])
		}
	}
}

// While the fake waits to release the second Agent call's input, the first
// call is complete at the client: its content_block_stop was flushed, not
// held for the end of the message.
func TestPacedStreamDeliversEachBlockStopAtOnce(t *testing.T) {
	reply := paceReply()
	n, _ := normalize(reply, [32]byte{})
	throughFirstCall := len(n.Content[0].Text) + len(n.Content[1].Input) // content bytes of blocks 0 and 1

	clock := newFakeClock()
	paceStart := clock.t.Add(500 * time.Millisecond) // the pacer starts after the first-token delay
	stops := make(chan int, 8)                       // content_block_stop indexes as the client reads them
	checked := false
	clock.hook = func(now time.Time, d time.Duration) {
		if now.Before(paceStart) || checked {
			return // the first-token delay, or done
		}
		// 100 tokens a second at 4 bytes a token: a byte every 2.5 ms.
		due := int(now.Add(d).Sub(paceStart) / (2500 * time.Microsecond))
		if due <= throughFirstCall {
			return
		}
		checked = true
		deadline := time.After(10 * time.Second)
		for {
			select {
			case i := <-stops:
				if i == 1 {
					return // the first Agent call is complete at the client
				}
			case <-deadline:
				t.Errorf("the fake waits to release content byte %d, but the client has not received block 1's content_block_stop", due)
				return
			}
		}
	}
	srv := start(t, Config{Policy: func(*Request) Reply { return reply }, Now: clock.Now, Sleep: clock.Sleep,
		FirstTokenDelay: 500 * time.Millisecond, OutputTokensPerSecond: 100})
	raw, _ := json.Marshal(body(user("fan out")))
	req, err := newRequest(t, srv.URL+"/v1/messages", raw)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	readStops(t, resp.Body, stops)
	if !checked {
		t.Fatal("the fake never waited to release the second Agent call's input")
	}
}

// readStops reads an event stream to its end, sending the index of each
// content_block_stop as it arrives.
func readStops(t *testing.T, r io.Reader, stops chan<- int) {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || !strings.Contains(data, `"content_block_stop"`) {
			continue
		}
		var ev struct{ Index int }
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		select {
		case stops <- ev.Index:
		default:
		}
	}
}

// A client that leaves in the middle of a paced stream ends the handler's
// wait at once (goleak checks that nothing is left running).
func TestPacedStreamEndsWhenTheClientLeaves(t *testing.T) {
	srv := start(t, Config{Policy: func(*Request) Reply { return paceReply() }, OutputTokensPerSecond: 0.5}) // 8 s a byte
	ctx, cancel := context.WithCancel(t.Context())
	raw, _ := json.Marshal(body(user("fan out")))
	req, err := newRequest(t, srv.URL+"/v1/messages", raw)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient(t).Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "content_block_start") {
	}
	cancel() // the fake is waiting to release the first delta
	resp.Body.Close()
	start := time.Now()
	srv.Close() // waits for the handler
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the handler took %s to notice", d)
	}
	if rec := srv.Requests()[0]; rec.Error != "request cancelled while streaming" {
		t.Fatalf("record error = %q", rec.Error)
	}
}
