package crew_test

import (
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// childDelay is each child response's first-token delay: the floor of the
// duration a merged result must report.
const childDelay = 20 * time.Millisecond

// allText is every text of a request's messages, tool results included.
func allText(q *fakeapi.Request) string {
	var b strings.Builder
	for _, m := range q.Messages {
		for _, c := range m.Content {
			b.WriteString(c.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// kindPolicy answers the lead (LEAD: in its first message, a spawn call on
// its first turn) and a child marked by marker: "first answer", then
// "second answer" once a SubagentStop hook sends it back. isChild finds the
// child's requests; delay is the child's first-token delay.
func kindPolicy(spawn fakeapi.Block, isChild func(*fakeapi.Request) bool, delay time.Duration) fakeapi.Policy {
	return func(q *fakeapi.Request) fakeapi.Reply {
		switch {
		case isChild(q):
			text := "first answer"
			switch {
			case continued(q) && strings.Contains(allText(q), "WORK: again"):
				text = "third answer"
			case strings.Contains(q.LastUserText(), "WORK: again"):
				text = "second answer"
			case continued(q):
				text = "second answer"
			}
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock(text)}, FirstTokenDelay: delay}
		case q.Turn() == 0:
			return reply(spawn)
		}
		return fakeapi.TextReply("lead done")
	}
}

func firstUserHas(s string) func(*fakeapi.Request) bool {
	return func(q *fakeapi.Request) bool { return strings.Contains(q.FirstUserText(), s) }
}

func directiveHas(s string) func(*fakeapi.Request) bool {
	return func(q *fakeapi.Request) bool { return strings.Contains(allText(q), "Your directive: "+s) }
}

func agentCall(input map[string]any) fakeapi.Block {
	in := map[string]any{"description": "do the work"}
	for k, v := range input {
		in[k] = v
	}
	return call("Agent", in)
}

func firstStopBlocks(_ string, n int) bool { return n == 0 }

// TestEverySpawnKindFiresSubagentHooksAndMergesItsResult runs one agent of
// each kind whose SubagentStop hook sends it back once: SubagentStart fires
// with its prompt, SubagentStop twice, and the result the parent gets sums
// both answers — turns, tokens, cost and duration.
func TestEverySpawnKindFiresSubagentHooksAndMergesItsResult(t *testing.T) {
	wantEvents := []string{"start WORK: it", "stop", "stop again"}
	t.Run("sync", func(t *testing.T) {
		r := newRig(t, rigConfig{blockStop: firstStopBlocks,
			policy: kindPolicy(agentCall(map[string]any{"prompt": "WORK: it"}), firstUserHas("WORK:"), childDelay)})
		r.send("LEAD: go")
		id := r.child()
		if diff := cmp.Diff(wantEvents, r.hookEvents(id)); diff != "" {
			t.Errorf("hook events (-want +got):\n%s", diff)
		}
		r.checkMerged(id, 2, childDelay)
		tk, ok := r.reg.Get(id)
		if !ok {
			t.Fatal("the child's task is gone")
		}
		st := tk.State()
		a, _ := r.rt.Lookup(id)
		if st.Result == nil || st.Result.Text != "second answer" || st.Result.TotalTokens != a.Result().Usage.Total() {
			t.Errorf("the caller's result: %+v; want the second answer and %d tokens", st.Result, a.Result().Usage.Total())
		}
	})
	for _, kind := range []string{"background", "fork"} {
		t.Run(kind, func(t *testing.T) {
			rc := rigConfig{blockStop: firstStopBlocks}
			if kind == "fork" {
				rc.flags = []string{"fork_subagent=on"}
				rc.policy = kindPolicy(agentCall(map[string]any{"prompt": "WORK: it"}), directiveHas("WORK: it"), childDelay)
			} else {
				rc.policy = kindPolicy(agentCall(map[string]any{"prompt": "WORK: it", "run_in_background": true}), firstUserHas("WORK:"), childDelay)
			}
			r := newRig(t, rc)
			r.send("LEAD: go")
			id := r.child()
			st := r.finished(id)
			if diff := cmp.Diff(wantEvents, r.hookEvents(id)); diff != "" {
				t.Errorf("hook events (-want +got):\n%s", diff)
			}
			r.checkMerged(id, 2, childDelay)
			checkNotified(t, st, "second answer", 2)
			a, _ := r.rt.Lookup(id)
			if st.Result.TotalTokens != a.Result().Usage.Total() {
				t.Errorf("the notification counts %d tokens, the agent used %d", st.Result.TotalTokens, a.Result().Usage.Total())
			}
		})
	}
	t.Run("resume", func(t *testing.T) {
		// The first run ends at once; the resumed one is sent back once.
		r := newRig(t, rigConfig{blockStop: func(_ string, n int) bool { return n == 1 },
			policy: kindPolicy(agentCall(map[string]any{"prompt": "WORK: first", "name": "worker", "run_in_background": true}), firstUserHas("WORK:"), childDelay)})
		r.send("LEAD: go")
		id := r.child()
		if st := r.finished(id); st.Status != task.StatusCompleted {
			t.Fatalf("first run: %s", st.Status)
		}
		note, err := r.rt.Deliver(t.Context(), "worker", llm.Text("WORK: again"))
		if err != nil {
			t.Fatalf("Deliver: %v", err)
		}
		st := r.finished(resumedTask(t, note))
		want := []string{"start WORK: first", "stop", "start WORK: again", "stop", "stop again"}
		if diff := cmp.Diff(want, r.hookEvents(id)); diff != "" {
			t.Errorf("hook events (-want +got):\n%s", diff)
		}
		r.checkMerged(id, 3, childDelay)
		checkNotified(t, st, "third answer", 2)
	})
	t.Run("teammate", func(t *testing.T) {
		r := newRig(t, rigConfig{blockStop: firstStopBlocks,
			policy: kindPolicy(agentCall(nil), firstUserHas("WORK:"), childDelay)})
		a := r.teammate()
		res, err := r.rt.Activate(t.Context(), a, []llm.Block{llm.Text("WORK: it")}, "", true)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "second answer" {
			t.Errorf("activation ended with %q", res.Text)
		}
		if diff := cmp.Diff(wantEvents, r.hookEvents(a.ID())); diff != "" {
			t.Errorf("hook events (-want +got):\n%s", diff)
		}
		r.checkMerged(a.ID(), 2, childDelay)
	})
}

// teammate builds a teammate agent the way package teammate does.
func (r *rig) teammate() *crew.Agent {
	r.t.Helper()
	gp, _ := r.rt.Catalog().Get(agentdef.GeneralPurpose)
	a, err := r.rt.NewAgent(r.t.Context(), crew.AgentSpec{ID: "mate@t1", Name: "mate", Team: "t1", Def: gp,
		Role: agentdef.RoleTeammate, Depth: 1, ParentModel: leadModel, ParentID: r.lead.ID()})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(a.Close)
	return a
}

// finished waits for task id to end and returns its final state: what its
// notification tells the parent (the lead may have drained the
// notification into its conversation already, so the queue is not read).
func (r *rig) finished(id string) task.State {
	r.t.Helper()
	tk, ok := r.reg.Get(id)
	if !ok {
		r.t.Fatalf("no task %s", id)
	}
	ctx, cancel := context.WithTimeout(r.t.Context(), 60*time.Second)
	defer cancel()
	st, err := tk.Wait(ctx)
	if err != nil {
		r.t.Fatalf("task %s: %v", id, err)
	}
	return st
}

// resumedTask is the id of the task a resume started, from Deliver's note.
func resumedTask(t *testing.T, note string) string {
	t.Helper()
	m := regexp.MustCompile(`\(task (\S+)\)`).FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("Deliver did not resume: %q", note)
	}
	return m[1]
}

// checkNotified checks what a finished agent task reports to its parent:
// its final text, its tokens and the duration of its last activation
// (turns answers).
func checkNotified(t *testing.T, st task.State, text string, turns int) {
	t.Helper()
	if st.Status != task.StatusCompleted || st.Result == nil || st.Result.Text != text {
		t.Fatalf("task state: %s %+v; want completed with %q", st.Status, st.Result, text)
	}
	if min := time.Duration(turns) * childDelay; st.Result.Duration < min {
		t.Errorf("task duration %s, but %d answers took at least %s", st.Result.Duration, turns, min)
	}
	if st.Result.TotalTokens == 0 {
		t.Errorf("the task counts no tokens: %+v", st.Result)
	}
}

// TestEverySpawnKindStopsAtItsDeadline gives each kind of agent a model
// that never answers: the per-agent deadline ends it, and the parent is
// told so.
func TestEverySpawnKindStopsAtItsDeadline(t *testing.T) {
	const deadline = 150 * time.Millisecond
	const want = "ran past its deadline of 150ms"
	hang := time.Minute
	t.Run("sync", func(t *testing.T) {
		var seen atomic.Value
		seen.Store("")
		policy := kindPolicy(agentCall(map[string]any{"prompt": "WORK: it"}), firstUserHas("WORK:"), hang)
		r := newRig(t, rigConfig{deadline: deadline, policy: func(q *fakeapi.Request) fakeapi.Reply {
			if q.Turn() == 1 && strings.Contains(q.FirstUserText(), "LEAD") {
				seen.Store(q.LastToolResultText())
			}
			return policy(q)
		}})
		r.send("LEAD: go")
		if seen := seen.Load().(string); !strings.Contains(seen, want) {
			t.Errorf("the lead was told %q; want it to say the agent %s", seen, want)
		}
	})
	for _, kind := range []string{"background", "fork"} {
		t.Run(kind, func(t *testing.T) {
			rc := rigConfig{deadline: deadline}
			if kind == "fork" {
				rc.flags = []string{"fork_subagent=on"}
				rc.policy = kindPolicy(agentCall(map[string]any{"prompt": "WORK: it"}), directiveHas("WORK: it"), hang)
			} else {
				rc.policy = kindPolicy(agentCall(map[string]any{"prompt": "WORK: it", "run_in_background": true}), firstUserHas("WORK:"), hang)
			}
			r := newRig(t, rc)
			r.send("LEAD: go")
			checkFailed(t, r.finished(r.child()), want)
		})
	}
	t.Run("resume", func(t *testing.T) {
		// The first run answers; the resumed one hangs.
		var resumed atomic.Bool
		r := newRig(t, rigConfig{deadline: deadline, policy: func(q *fakeapi.Request) fakeapi.Reply {
			switch {
			case strings.Contains(q.LastUserText(), "WORK: again"):
				resumed.Store(true)
				return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("late")}, FirstTokenDelay: hang}
			case strings.Contains(q.FirstUserText(), "WORK:"):
				return fakeapi.TextReply("first answer")
			case q.Turn() == 0:
				return reply(agentCall(map[string]any{"prompt": "WORK: first", "name": "worker", "run_in_background": true}))
			}
			return fakeapi.TextReply("lead done")
		}})
		r.send("LEAD: go")
		if st := r.finished(r.child()); st.Status != task.StatusCompleted {
			t.Fatalf("first run: %s", st.Status)
		}
		note, err := r.rt.Deliver(t.Context(), "worker", llm.Text("WORK: again"))
		if err != nil {
			t.Fatal(err)
		}
		checkFailed(t, r.finished(resumedTask(t, note)), want)
		if !resumed.Load() {
			t.Error("the resumed agent never asked the model")
		}
	})
	t.Run("teammate", func(t *testing.T) {
		r := newRig(t, rigConfig{deadline: deadline, policy: kindPolicy(agentCall(nil), firstUserHas("WORK:"), hang)})
		a := r.teammate()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		_, err := r.rt.Activate(ctx, a, []llm.Block{llm.Text("WORK: it")}, "", true)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("activation: %v; want it to say the agent %s", err, want)
		}
	})
}

func checkFailed(t *testing.T, st task.State, want string) {
	t.Helper()
	if st.Status != task.StatusFailed || !strings.Contains(st.Err, want) {
		t.Fatalf("task state: %s %q; want a failure saying the agent %s", st.Status, st.Err, want)
	}
}
