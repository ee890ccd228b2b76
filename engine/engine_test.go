package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replyFunc is a model in a function: it sees every request and returns the
// next response. Unit tests use it; end-to-end tests use llm/fakeapi over
// HTTP with the real SDK client.
type replyFunc func(req *llm.Request) *llm.Response

func (f replyFunc) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: f(req)}, nil)
	}
}

func textResp(s string) *llm.Response {
	return &llm.Response{Content: []llm.Block{llm.Text(s)}, StopReason: llm.StopEndTurn,
		Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}
}

func toolResp(uses ...llm.Block) *llm.Response {
	return &llm.Response{Content: uses, StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}
}

func use(id, name, input string) llm.Block { return llm.ToolUse(id, name, json.RawMessage(input)) }

// probe is a test tool that records concurrency and order.
type probe struct {
	name     string
	readOnly bool
	mu       sync.Mutex
	order    []string
	active   atomic.Int32
	maxSeen  atomic.Int32
	gate     chan struct{} // when set, Run waits on it
}

func (p *probe) Def() llm.ToolDef {
	return llm.ToolDef{Name: p.name, Description: "test probe",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}},"required":["v"],"additionalProperties":false}`)}
}

func (p *probe) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: p.readOnly, ConcurrencySafe: p.readOnly}
}

func (p *probe) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	n := p.active.Add(1)
	defer p.active.Add(-1)
	for {
		m := p.maxSeen.Load()
		if n <= m || p.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	var in struct{ V string }
	_ = json.Unmarshal(input, &in)
	if p.gate != nil {
		select {
		case <-p.gate:
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}
	p.mu.Lock()
	p.order = append(p.order, in.V)
	p.mu.Unlock()
	return tool.Text(p.name + ":" + in.V), nil
}

func lastToolResults(req *llm.Request) []llm.Block {
	m := req.Messages[len(req.Messages)-1]
	var out []llm.Block
	for _, b := range m.Content {
		if b.Type == llm.BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}

func TestTextTurn(t *testing.T) {
	a := New(Config{Model: replyFunc(func(*llm.Request) *llm.Response { return textResp("hello") }), ModelName: "m"})
	res, err := a.Send(t.Context(), []llm.Block{llm.Text("hi")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || res.Turns != 1 || res.Stop != StopSuccess {
		t.Fatalf("result = %+v", res)
	}
	if got := len(a.History()); got != 2 {
		t.Fatalf("history has %d messages, want 2", got)
	}
}

func TestReadOnlyCallsRunInParallelAndResultsKeepOrder(t *testing.T) {
	ro := &probe{name: "RO", readOnly: true, gate: make(chan struct{})}
	var seen []llm.Block
	step := 0
	model := replyFunc(func(req *llm.Request) *llm.Response {
		step++
		if step == 1 {
			return toolResp(use("t1", "RO", `{"v":"a"}`), use("t2", "RO", `{"v":"b"}`), use("t3", "RO", `{"v":"c"}`))
		}
		seen = lastToolResults(req)
		return textResp("done")
	})
	a := New(Config{Model: model, Tools: []tool.Tool{ro}})
	// Release the gate only once all three calls are inside Run at once:
	// that can only happen if they run in parallel.
	go func() {
		for ro.active.Load() < 3 {
			runtime.Gosched()
		}
		close(ro.gate)
	}()
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range seen {
		ids = append(ids, b.ToolUseID+"="+b.Content[0].Text)
	}
	if diff := cmp.Diff([]string{"t1=RO:a", "t2=RO:b", "t3=RO:c"}, ids); diff != "" {
		t.Fatalf("results (-want +got):\n%s", diff)
	}
	if ro.maxSeen.Load() != 3 {
		t.Fatalf("max concurrent = %d, want 3", ro.maxSeen.Load())
	}
}

func TestWritesRunInOrderOneAtATime(t *testing.T) {
	w := &probe{name: "W"}
	step := 0
	model := replyFunc(func(req *llm.Request) *llm.Response {
		step++
		if step == 1 {
			var uses []llm.Block
			for i := range 6 {
				uses = append(uses, use(fmt.Sprint("t", i), "W", fmt.Sprintf(`{"v":"%d"}`, i)))
			}
			return toolResp(uses...)
		}
		return textResp("done")
	})
	a := New(Config{Model: model, Tools: []tool.Tool{w}})
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0", "1", "2", "3", "4", "5"}, w.order); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	if w.maxSeen.Load() != 1 {
		t.Fatalf("writes overlapped: max concurrent = %d", w.maxSeen.Load())
	}
}

type denyGate struct{ denied atomic.Int32 }

func (g *denyGate) Check(_ context.Context, c *Call) Verdict {
	if c.Traits.ReadOnly {
		return Verdict{Allow: true}
	}
	g.denied.Add(1)
	return Verdict{Reason: "writes need approval in this test"}
}

func TestBadCallsBecomeErrorResultsAndTheLoopContinues(t *testing.T) {
	w, v := &probe{name: "W"}, &probe{name: "V"}
	cases := []struct {
		name string
		use  llm.Block
		want string
	}{
		{"unknown tool", use("x1", "Nope", `{}`), `no tool named "Nope" is available to you. Your tools: V, W.`},
		{"withheld tool", use("x6", "V", `{"v":"a"}`), "Error: V is not available to you: forks may not. Your tools: W."},
		{"lacking tool", use("x7", "Agent", `{}`), "Error: Agent is not available to you: subagents start none. Your tools: V, W."},
		{"not an object", use("x2", "W", `[1]`), "InputValidationError"},
		{"missing field", use("x3", "W", `{}`), "InputValidationError"},
		{"unknown field", use("x4", "W", `{"v":"a","zzz":1}`), "InputValidationError"},
		{"denied", use("x5", "W", `{"v":"a"}`), "Permission denied: writes need approval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []llm.Block
			step := 0
			model := replyFunc(func(req *llm.Request) *llm.Response {
				step++
				if step == 1 {
					return toolResp(tc.use)
				}
				got = lastToolResults(req)
				return textResp("recovered")
			})
			cfg := Config{Model: model, Tools: []tool.Tool{w, v}, Gate: &denyGate{}, Lacking: map[string]string{"Agent": "subagents start none"}}
			if tc.name == "withheld tool" {
				cfg.Withheld = map[string]string{"V": "forks may not"}
			}
			a := New(cfg)
			res, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "recovered" {
				t.Fatalf("loop did not continue: %+v", res)
			}
			if len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Content[0].Text, tc.want) {
				t.Fatalf("result = %+v, want is_error containing %q", got, tc.want)
			}
		})
	}
	if len(w.order)+len(v.order) != 0 {
		t.Fatalf("a rejected call ran: %v %v", w.order, v.order)
	}
}

func TestMaxTurns(t *testing.T) {
	w := &probe{name: "W"}
	model := replyFunc(func(*llm.Request) *llm.Response { return toolResp(use("t", "W", `{"v":"x"}`)) })
	a := New(Config{Model: model, Tools: []tool.Tool{w}, MaxTurns: 3})
	res, err := a.Send(t.Context(), []llm.Block{llm.Text("loop")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopMaxTurns || res.Turns != 3 {
		t.Fatalf("result = %+v", res)
	}
}

func TestCancelDuringToolLeavesAValidHistory(t *testing.T) {
	blocked := &probe{name: "W", gate: make(chan struct{})}
	model := replyFunc(func(*llm.Request) *llm.Response {
		return toolResp(use("t1", "W", `{"v":"1"}`), use("t2", "W", `{"v":"2"}`))
	})
	a := New(Config{Model: model, Tools: []tool.Tool{blocked}})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for blocked.active.Load() == 0 {
			runtime.Gosched()
		}
		cancel()
	}()
	_, err := a.Send(ctx, []llm.Block{llm.Text("go")}, "")
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	h := a.History()
	last := h[len(h)-1]
	if last.Role != llm.RoleUser || len(last.Content) != 2 {
		t.Fatalf("last message = %+v, want two tool results", last)
	}
	for _, b := range last.Content {
		if !b.IsError || !strings.Contains(b.Content[0].Text, "Interrupted") {
			t.Fatalf("result %+v should say interrupted", b)
		}
	}
}

type sliceInbox struct {
	mu    sync.Mutex
	items []llm.Block
}

func (s *sliceInbox) put(b llm.Block) { s.mu.Lock(); s.items = append(s.items, b); s.mu.Unlock() }
func (s *sliceInbox) Drain() []llm.Block {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.items
	s.items = nil
	return out
}

func TestInboxIsInjectedAtTheToolResultBoundary(t *testing.T) {
	inbox := &sliceInbox{}
	w := &probe{name: "W"}
	var second *llm.Request
	step := 0
	model := replyFunc(func(req *llm.Request) *llm.Response {
		step++
		switch step {
		case 1:
			inbox.put(llm.Text("<teammate-message from=\"bob\">hi</teammate-message>"))
			return toolResp(use("t1", "W", `{"v":"1"}`))
		case 2:
			second = req
			return textResp("ok")
		}
		return textResp("unexpected")
	})
	a := New(Config{Model: model, Tools: []tool.Tool{w}, Inbox: inbox})
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	last := second.Messages[len(second.Messages)-1].Content
	if len(last) != 2 || last[0].Type != llm.BlockToolResult || !strings.Contains(last[1].Text, "teammate-message") {
		t.Fatalf("second request's last message = %+v", last)
	}
}

func TestCacheMarkersAreFreshEveryTurn(t *testing.T) {
	w := &probe{name: "W"}
	var reqs []*llm.Request
	model := replyFunc(func(req *llm.Request) *llm.Response {
		reqs = append(reqs, req)
		if len(reqs) < 4 {
			return toolResp(use(fmt.Sprint("t", len(reqs)), "W", `{"v":"x"}`))
		}
		return textResp("done")
	})
	a := New(Config{Model: model, Tools: []tool.Tool{w}, System: []llm.Block{llm.Text("sys")}})
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		if n := r.Breakpoints(); n != 3 {
			t.Fatalf("request %d has %d breakpoints, want 3", i, n)
		}
		last := r.Messages[len(r.Messages)-1]
		if !last.Content[len(last.Content)-1].Cache {
			t.Fatalf("request %d: last block not marked", i)
		}
	}
	for _, m := range a.History() {
		for _, b := range m.Content {
			if b.Cache {
				t.Fatal("a cache marker leaked into the history")
			}
		}
	}
}
