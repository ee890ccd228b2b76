package crew_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Agent calls that start while the lead's message streams.

// briefs are the Agent calls of a lead's fan-out, prompts "brief-1" … .
func briefs(n int) []fakeapi.Block {
	var out []fakeapi.Block
	for i := 1; i <= n; i++ {
		out = append(out, agentCall(map[string]any{"subagent_type": "general-purpose",
			"prompt": fmt.Sprintf("brief-%d: %s", i, strings.Repeat("look into it. ", 20))}))
	}
	return out
}

// briefOf names the brief a child's request carries, "" for the lead's.
func briefOf(q *fakeapi.Request) string {
	first := q.FirstUserText()
	i := strings.Index(first, "brief-")
	if i < 0 {
		return ""
	}
	return first[i : i+len("brief-1")]
}

// firsts counts each child's first requests by brief.
type firsts struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *firsts) add(brief string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[brief]++
	return f.n[brief]
}

func (f *firsts) get() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for k, v := range f.n {
		out[k] = v
	}
	return out
}

// A subagent starts as soon as its Agent call is complete in the lead's
// streamed message: the lead's stream is held after the first call's
// block until the first child's first request has arrived, so the lead's
// message can end only if that child started while it streamed.
func TestSubagentStartsWhileTheLeadStillWrites(t *testing.T) {
	holds := fakeapi.NewHolds(1000)
	calls := briefs(3)
	arrived := make(chan struct{})
	var once sync.Once
	var reached <-chan struct{}
	var mu sync.Mutex
	seen := &firsts{}
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if b := briefOf(q); b != "" {
			if q.Turn() == 0 && seen.add(b) == 1 && b == "brief-1" {
				mu.Lock()
				r := reached
				mu.Unlock()
				select {
				case <-r: // the lead's message is held after the first call
				case <-time.After(fakeapi.HoldLimit):
					t.Error("the first child asked before the lead's stream reached its hold")
				}
				once.Do(func() { close(arrived) })
			}
			return fakeapi.TextReply(b + " done")
		}
		if q.Turn() == 0 {
			mu.Lock()
			reached = holds.After(q, len(calls[0].Input), arrived)
			mu.Unlock()
			return reply(calls...)
		}
		return fakeapi.TextReply("lead done")
	}
	r := newRig(t, rigConfig{policy: policy, holds: holds})
	if got := r.send("LEAD: fan out"); got != "lead done" {
		t.Fatalf("lead ended with %q", got)
	}
	if holds.TimedOut() != 0 {
		t.Fatal("the lead's stream was held after the first Agent call, and no child started: agents start only when the message ends")
	}
	if got := seen.get(); len(got) != 3 || got["brief-1"] != 1 || got["brief-2"] != 1 || got["brief-3"] != 1 {
		t.Fatalf("children's first requests: %v; want one for each of three", got)
	}
}

// The case: the lead's stream is cut after two of five complete
// Agent calls. Exactly two agents exist, each ran once (one SubagentStart,
// one first request), the lead's request was not retried (a retry would
// bring five more), and the lead's next request continues from the two
// calls with their results.
func TestStreamCutAfterTwoOfFiveAgentsLeavesTwo(t *testing.T) {
	calls := briefs(5)
	seen := &firsts{}
	leadFirst := 0
	var mu sync.Mutex
	var next *fakeapi.Request
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if b := briefOf(q); b != "" {
			if q.Turn() == 0 {
				seen.add(b)
			}
			return fakeapi.TextReply(b + " done")
		}
		switch {
		case q.Turn() == 0:
			mu.Lock()
			leadFirst++
			mu.Unlock()
			if q.Attempt > 1 {
				return reply(calls...) // a whole-request retry: five agents
			}
			return fakeapi.Reply{Content: calls, Fault: &fakeapi.Fault{Kind: fakeapi.CutConnection, AfterBlocks: 2}}
		}
		mu.Lock()
		next = q
		mu.Unlock()
		return fakeapi.TextReply("lead done")
	}
	r := newRig(t, rigConfig{policy: policy})
	if got := r.send("LEAD: fan out five"); got != "lead done" {
		t.Fatalf("lead ended with %q", got)
	}
	if ids := r.children(); len(ids) != 2 {
		t.Fatalf("%d agents exist besides the lead, want 2", len(ids))
	}
	for _, id := range r.children() {
		if ev := r.hookEvents(id); len(ev) != 2 || !strings.HasPrefix(ev[0], "start ") || ev[1] != "stop" {
			t.Errorf("agent %s hooks %v; want one start and one stop", id, ev)
		}
	}
	if got := seen.get(); len(got) != 2 || got["brief-1"] != 1 || got["brief-2"] != 1 {
		t.Fatalf("children's first requests: %v; want brief-1 and brief-2 once each", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if leadFirst != 1 {
		t.Fatalf("the lead's first request was sent %d times; want once (no whole-request retry)", leadFirst)
	}
	results := next.LastToolResultText()
	if !strings.Contains(results, "brief-1 done") || !strings.Contains(results, "brief-2 done") || strings.Contains(results, "brief-3") {
		t.Fatalf("the lead's next request carries results %q; want the two agents'", results)
	}
}

// With the sibling_gate flag off, agents of one message do not wait for
// the first one's first token: the response to the first child request
// that arrives is held until both other children have sent theirs, which
// with the gate on they would not do before it began.
func TestSiblingGateOffStartsSiblingsAtOnce(t *testing.T) {
	calls := briefs(3)
	seen := &firsts{}
	var mu sync.Mutex
	arrivals := 0
	others := make(chan struct{}, 2)
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if b := briefOf(q); b != "" {
			if q.Turn() > 0 || seen.add(b) > 1 {
				return fakeapi.TextReply(b + " done")
			}
			mu.Lock()
			arrivals++
			first := arrivals == 1
			mu.Unlock()
			if !first {
				others <- struct{}{}
				return fakeapi.TextReply(b + " done")
			}
			for range 2 {
				select {
				case <-others:
				case <-time.After(20 * time.Second):
					t.Error("with the gate off, the other siblings still waited for the first one's response")
					return fakeapi.TextReply(b + " done")
				}
			}
			return fakeapi.TextReply(b + " done")
		}
		if q.Turn() == 0 {
			return reply(calls...)
		}
		return fakeapi.TextReply("lead done")
	}
	r := newRig(t, rigConfig{policy: policy, flags: []string{"sibling_gate=off"}})
	if got := r.send("LEAD: fan out"); got != "lead done" {
		t.Fatalf("lead ended with %q", got)
	}
}
