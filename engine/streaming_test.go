package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// Calls that start while the message streams, and responses cut short
// after a call started: through llm/fakeapi and the real client.

// recTool is a test tool that records its runs; RO is read-only and
// concurrency-safe, W is neither.
type recTool struct {
	name     string
	readOnly bool
	// onRun, when set, runs at the start of each run with its v.
	onRun func(v string)
	mu    sync.Mutex
	runs  []string
}

func (rt *recTool) Def() llm.ToolDef {
	return llm.ToolDef{Name: rt.name, Description: "records its runs",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}},"required":["v"],"additionalProperties":false}`)}
}

func (rt *recTool) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: rt.readOnly, ConcurrencySafe: rt.readOnly}
}

func (rt *recTool) Run(_ context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct{ V string }
	_ = json.Unmarshal(input, &in)
	if rt.onRun != nil {
		rt.onRun(in.V)
	}
	rt.mu.Lock()
	rt.runs = append(rt.runs, in.V)
	rt.mu.Unlock()
	return tool.Text(rt.name + " ran " + in.V), nil
}

func (rt *recTool) ran() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := slices.Clone(rt.runs)
	slices.Sort(out)
	return out
}

// counter counts hooks and permission checks per call id, and logs the
// engine's events in order.
type counter struct {
	mu               sync.Mutex
	pre, post, gated map[string]int
	log              []string
}

func newCounter() *counter {
	return &counter{pre: map[string]int{}, post: map[string]int{}, gated: map[string]int{}}
}

func (c *counter) PreToolUse(_ context.Context, call *Call) HookVerdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pre[call.ID]++
	return HookVerdict{}
}

func (c *counter) PostToolUse(_ context.Context, call *Call, _ *tool.Result) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.post[call.ID]++
	return ""
}

func (c *counter) Check(_ context.Context, call *Call) Verdict {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gated[call.ID]++
	return Verdict{Allow: true}
}

func (c *counter) sink(ev Event) {
	var line string
	switch ev.Kind {
	case EventAssistant:
		line = fmt.Sprintf("assistant %d", ev.Turn)
	case EventToolStart:
		line = "start " + ev.Tool.ID
	case EventToolDone:
		line = "done " + ev.Tool.ID
	case EventRetry:
		line = "retry"
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, line)
}

// at is the position of line in the log, -1 when absent.
func (c *counter) at(line string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Index(c.log, line)
}

// once checks that every id in ran had each hook and the permission check
// exactly once, and every id in not none of them.
func (c *counter) once(t *testing.T, ran, not []string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ran {
		if c.pre[id] != 1 || c.post[id] != 1 || c.gated[id] != 1 {
			t.Errorf("call %s: PreToolUse %d, PostToolUse %d, permission checks %d; want 1 each", id, c.pre[id], c.post[id], c.gated[id])
		}
	}
	for _, id := range not {
		if c.pre[id]+c.post[id]+c.gated[id] != 0 {
			t.Errorf("call %s never ran, but had PreToolUse %d, PostToolUse %d, permission checks %d", id, c.pre[id], c.post[id], c.gated[id])
		}
	}
}

// streamRig is a conversation on the fake API, paced without waiting
// (fakeapi.Holds), with an RO and a W tool, hooks and a gate that count.
type streamRig struct {
	srv    *fakeapi.Server
	holds  *fakeapi.Holds
	ro, w  *recTool
	count  *counter
	conv   *Conversation
	config Config
}

func newStreamRig(t *testing.T, policy fakeapi.Policy, rec Recorder) *streamRig {
	t.Helper()
	r := &streamRig{holds: fakeapi.NewHolds(1000), ro: &recTool{name: "RO", readOnly: true}, w: &recTool{name: "W"}, count: newCounter()}
	cfg := fakeapi.Config{Policy: policy}
	r.holds.Configure(&cfg)
	r.srv = fakeapi.New(cfg)
	t.Cleanup(r.srv.Close)
	model, err := claude.New(claude.Config{APIKey: "k", BaseURL: r.srv.URL,
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	r.config = Config{Model: model, ModelName: "claude-sonnet-5-5", System: []llm.Block{llm.Text("You are a test agent.")},
		Tools: []tool.Tool{r.ro, r.w}, Hooks: r.count, Gate: r.count, Sink: r.count.sink, Recorder: rec}
	r.conv = New(r.config)
	return r
}

func (r *streamRig) send(t *testing.T, text string) (*Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	return r.conv.Send(ctx, []llm.Block{llm.Text(text)}, "")
}

// requests returns the fake's decoded requests in arrival order.
func (r *streamRig) requests() []*fakeapi.Request {
	var out []*fakeapi.Request
	for _, rec := range r.srv.Requests() {
		if rec.Request != nil {
			out = append(out, rec.Request)
		}
	}
	return out
}

func ro(v string) fakeapi.Block {
	return fakeapi.ToolUseBlock("ro_"+v, "RO", json.RawMessage(`{"v":"`+v+`"}`))
}

func wr(v string) fakeapi.Block {
	return fakeapi.ToolUseBlock("w_"+v, "W", json.RawMessage(`{"v":"`+v+`"}`))
}

// inputLen is the content bytes a tool_use block streams (its input).
func inputLen(b fakeapi.Block) int { return len(b.Input) }

// A read-only call starts as soon as its block is complete: the lead's
// stream is held after the first call's block until that call runs, so
// the message can end only if the call started while it streamed. A W
// call (not read-only) in the same message starts only once the message
// has ended, and the RO call after it only once W has finished. Results
// keep the calls' order.
func TestReadOnlyCallsStartWhileTheMessageStreams(t *testing.T) {
	started := make(chan struct{})
	var reached <-chan struct{}
	var rig *streamRig
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if q.Turn() > 0 {
			return fakeapi.TextReply("done")
		}
		reached = rig.holds.After(q, inputLen(ro("a")), started)
		return fakeapi.Reply{Content: []fakeapi.Block{ro("a"), ro("b"),
			fakeapi.TextBlock(strings.Repeat("Now a write, then one more read. ", 8)), wr("w"), ro("c")}}
	}
	rig = newStreamRig(t, policy, nil)
	var once sync.Once
	rig.ro.onRun = func(v string) {
		if v != "a" {
			return
		}
		select {
		case <-reached: // the stream is held after a's block: it has not ended
		case <-time.After(fakeapi.HoldLimit):
			t.Error("call a ran, but the stream never reached its hold")
		}
		once.Do(func() { close(started) })
	}
	res, err := rig.send(t, "go")
	if err != nil {
		t.Fatal(err)
	}
	if n := rig.holds.TimedOut(); n != 0 {
		t.Fatal("the stream was held after call a's block and a did not start: calls start only when the message ends")
	}
	if res.Turns != 2 || res.ToolUses != 4 {
		t.Fatalf("result %+v; want 2 turns, 4 tool uses", res)
	}
	msgEnd, wStart, wDone, cStart := rig.count.at("assistant 1"), rig.count.at("start w_w"), rig.count.at("done w_w"), rig.count.at("start ro_c")
	if aStart := rig.count.at("start ro_a"); aStart < 0 || aStart > msgEnd {
		t.Errorf("call a started at event %d, the message ended at %d; want before", aStart, msgEnd)
	}
	if wStart < msgEnd {
		t.Errorf("W started at event %d, before its message ended (%d): a call that is not read-only started early", wStart, msgEnd)
	}
	if cStart < wDone {
		t.Errorf("call c (after W) started at event %d, before W was done (%d)", cStart, wDone)
	}
	reqs := rig.requests()
	var ids []string
	for _, b := range reqs[1].Messages[len(reqs[1].Messages)-1].Content {
		ids = append(ids, b.ToolUseID)
	}
	if want := []string{"ro_a", "ro_b", "w_w", "ro_c"}; !slices.Equal(ids, want) {
		t.Errorf("results in the order %v, want %v", ids, want)
	}
	rig.count.once(t, []string{"ro_a", "ro_b", "w_w", "ro_c"}, nil)
}

// cutReply is the lead's first answer in the cut tests: two read-only
// calls, a W call, and a fourth call that the fault cuts part-way.
func cutReply(kind fakeapi.FaultKind, typ string) fakeapi.Reply {
	return fakeapi.Reply{Content: []fakeapi.Block{ro("a"), ro("b"), wr("w"), ro("c")},
		Fault: &fakeapi.Fault{Kind: kind, Type: typ, AfterBlocks: 3}}
}

// A response cut short after calls started is not retried: the complete
// blocks become the assistant message, the started calls (a and b) run
// once, the complete call that had not started (W) is answered as not
// run, the partial one (c) is dropped, and the next request continues
// from there — valid for the API (the fake checks the tool_result ids)
// and sent once. Hooks and the permission check run once per call that
// ran, never for W.
func TestResponseCutAfterACallStartedIsNotRetried(t *testing.T) {
	for _, tc := range []struct{ kind, typ string }{
		{string(fakeapi.CutConnection), ""},
		{string(fakeapi.StreamError), "overloaded_error"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			policy := func(q *fakeapi.Request) fakeapi.Reply {
				switch {
				case q.Turn() > 0:
					return fakeapi.TextReply("done")
				case q.Attempt > 1:
					return fakeapi.Reply{Content: []fakeapi.Block{ro("again")}} // a whole-request retry
				}
				return cutReply(fakeapi.FaultKind(tc.kind), tc.typ)
			}
			rig := newStreamRig(t, policy, nil)
			res, err := rig.send(t, "go")
			if err != nil {
				t.Fatal(err)
			}
			checkCutContinuation(t, rig, res)
		})
	}
}

// checkCutContinuation checks what a cut of cutReply leaves: two requests,
// the second carrying the kept message, the results and the note.
func checkCutContinuation(t *testing.T, rig *streamRig, res *Result) {
	t.Helper()
	reqs := rig.requests()
	if len(reqs) != 2 || reqs[1].Attempt != 1 || reqs[1].Turn() != 1 {
		t.Fatalf("%d requests; want the cut one and one continuing from it (no retry)", len(reqs))
	}
	if got := rig.ro.ran(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("RO ran %v; want a and b once each", got)
	}
	if got := rig.w.ran(); len(got) != 0 {
		t.Errorf("W ran %v; a call that had not started ran after the cut", got)
	}
	msgs := reqs[1].Messages
	kept, answer := msgs[len(msgs)-2], msgs[len(msgs)-1]
	var keptIDs []string
	for _, b := range kept.Content {
		keptIDs = append(keptIDs, b.ID)
	}
	if !slices.Equal(keptIDs, []string{"ro_a", "ro_b", "w_w"}) {
		t.Errorf("the kept assistant message holds %v; want the three complete calls", keptIDs)
	}
	if len(answer.Content) != 4 {
		t.Fatalf("the answer holds %d blocks; want three results and a note", len(answer.Content))
	}
	for i, want := range []struct {
		id    string
		err   bool
		start string
	}{{"ro_a", false, "RO ran a"}, {"ro_b", false, "RO ran b"}, {"w_w", true, "Not run: your response was cut off"}} {
		b := answer.Content[i]
		text := b.Content[0].Text
		if b.ToolUseID != want.id || b.IsError != want.err || !strings.HasPrefix(text, want.start) {
			t.Errorf("result %d: %s is_error=%v %q; want %s is_error=%v %q…", i, b.ToolUseID, b.IsError, text, want.id, want.err, want.start)
		}
	}
	if note := answer.Content[3]; note.Type != "text" || note.Text != cutOffNote {
		t.Errorf("the answer ends with %+v; want the note", note)
	}
	if res.Turns != 2 || res.ToolUses != 2 || res.Text != "done" {
		t.Errorf("result %+v; want 2 turns, 2 tool uses, text done", res)
	}
	rig.count.once(t, []string{"ro_a", "ro_b"}, []string{"w_w", "ro_c", "ro_again"})
	if rig.count.at("retry") >= 0 {
		t.Error("a retry was reported, but none was made")
	}
}

// A cut the provider would not retry (an invalid_request_error event) ends
// the Send with the error once the started calls have their results; the
// conversation stays valid, and a later Send continues it.
func TestResponseCutWithoutRetryEndsTheSendValid(t *testing.T) {
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if q.Turn() > 0 {
			return fakeapi.TextReply("done")
		}
		return cutReply(fakeapi.StreamError, "invalid_request_error")
	}
	rig := newStreamRig(t, policy, nil)
	_, err := rig.send(t, "go")
	if err == nil || !strings.Contains(err.Error(), "invalid_request_error") {
		t.Fatalf("Send returned %v; want the stream's invalid_request_error", err)
	}
	hist := rig.conv.History()
	if last := hist[len(hist)-1]; last.Role != llm.RoleUser || len(last.Content) != 4 {
		t.Fatalf("the history ends with %s of %d blocks; want the results and the note", last.Role, len(last.Content))
	}
	res, err := rig.send(t, "go on")
	if err != nil {
		t.Fatalf("the conversation did not continue: %v", err)
	}
	if res.Text != "done" || len(rig.requests()) != 2 {
		t.Fatalf("continued with %+v after %d requests", res, len(rig.requests()))
	}
	if got := rig.ro.ran(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("RO ran %v; want a and b once each", got)
	}
	rig.count.once(t, []string{"ro_a", "ro_b"}, []string{"w_w", "ro_c"})
}

// Before any call has started, a failure is retried as a whole request, as
// it always was: a 529 before the first block, a cut after a complete text
// block, a cut after a complete W call (which does not start early). Each
// call then runs once, from the retried response.
func TestFailureBeforeAnyCallStartedRetriesTheWholeRequest(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first fakeapi.Reply
	}{
		{"529 before any block", fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.Overloaded}}},
		{"429 before any block", fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.RateLimited, RetryAfterMs: "1"}}},
		{"cut after a text block", fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("Reading."), ro("a"), wr("w")},
			Fault: &fakeapi.Fault{Kind: fakeapi.CutConnection, AfterBlocks: 1}}},
		{"cut after a W call", fakeapi.Reply{Content: []fakeapi.Block{wr("w"), ro("a")},
			Fault: &fakeapi.Fault{Kind: fakeapi.StreamError, AfterBlocks: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy := func(q *fakeapi.Request) fakeapi.Reply {
				switch {
				case q.Turn() > 0:
					return fakeapi.TextReply("done")
				case q.Attempt == 1:
					return tc.first
				}
				return fakeapi.Reply{Content: []fakeapi.Block{wr("w"), ro("a")}}
			}
			rig := newStreamRig(t, policy, nil)
			res, err := rig.send(t, "go")
			if err != nil {
				t.Fatal(err)
			}
			reqs := rig.requests()
			if len(reqs) != 3 || reqs[1].Attempt != 2 {
				t.Fatalf("%d requests; want the failed one, its whole retry and the next turn", len(reqs))
			}
			if rig.count.at("retry") < 0 {
				t.Error("the retry was not reported")
			}
			if !slices.Equal(rig.w.ran(), []string{"w"}) || !slices.Equal(rig.ro.ran(), []string{"a"}) {
				t.Errorf("W ran %v, RO ran %v; want w and a once each", rig.w.ran(), rig.ro.ran())
			}
			if res.ToolUses != 2 {
				t.Errorf("result %+v; want 2 tool uses", res)
			}
			rig.count.once(t, []string{"w_w", "ro_a"}, nil)
		})
	}
}

// After a cut, the transcript holds the kept message, the results and the
// note in order: a conversation resumed from it sends the same bytes as
// the one that lived through the cut.
func TestCutResponseResumesToTheSameBytes(t *testing.T) {
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		switch {
		case strings.Contains(q.LastUserText(), "one more"):
			return fakeapi.TextReply("ok")
		case q.Turn() > 0:
			return fakeapi.TextReply("done")
		}
		return cutReply(fakeapi.CutConnection, "")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := transcript.Create(transcript.WriterConfig{Path: path, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rig := newStreamRig(t, policy, w)
	res, err := rig.send(t, "go")
	if err != nil {
		t.Fatal(err)
	}
	checkCutContinuation(t, rig, res)

	loaded, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Problems) != 0 {
		t.Fatalf("the transcript needed repairs: %v", loaded.Problems)
	}
	cfg := rig.config
	cfg.History, cfg.Recorder = loaded.Messages, nil
	resumed := New(cfg)
	for _, c := range []*Conversation{rig.conv, resumed} {
		if _, err := c.Send(t.Context(), []llm.Block{llm.Text("one more")}, ""); err != nil {
			t.Fatal(err)
		}
	}
	recs := rig.srv.Requests()
	live, again := recs[len(recs)-2].Body, recs[len(recs)-1].Body
	if !bytes.Equal(live, again) {
		i := 0
		for i < min(len(live), len(again)) && live[i] == again[i] {
			i++
		}
		t.Fatalf("the resumed conversation's request differs from the live one's at byte %d:\n…%s…\n…%s…",
			i, live[max(0, i-80):min(len(live), i+80)], again[max(0, i-80):min(len(again), i+80)])
	}
	if !strings.Contains(string(live), cutOffNote) {
		t.Fatal("the request after the cut does not carry the note")
	}
}
