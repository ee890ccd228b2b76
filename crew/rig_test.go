package crew_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/builtin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// leadModel is priced (claude-sonnet), so costs are not zero.
const leadModel = "claude-sonnet-5-5"

// rig is a runtime on the fake API with the real client, the real Agent
// tool and hooks that record what fires for each agent.
type rig struct {
	t    *testing.T
	srv  *fakeapi.Server
	rt   *crew.Crew
	reg  *task.Registry
	lead *crew.Agent

	mu sync.Mutex
	// per agent id: hook events in order, cost and turns of its responses
	// as the sink saw them.
	events map[string][]string
	costs  map[string]float64
	turns  map[string]int
	// blockStop says whether the n-th SubagentStop of an agent (from 0)
	// sends it back to work.
	blockStop func(id string, n int) bool
	stops     map[string]int
}

type rigConfig struct {
	policy    fakeapi.Policy
	flags     []string
	deadline  time.Duration
	blockStop func(id string, n int) bool
	// holds, when set, paces the fake's streams (fakeapi.Holds).
	holds *fakeapi.Holds
	// onTask, when set, sees the task registry's events as they are
	// emitted (the rig's runtime is set by then).
	onTask func(r *rig, ev task.Event)
}

func newRig(t *testing.T, rc rigConfig) *rig {
	t.Helper()
	r := &rig{t: t, events: map[string][]string{}, costs: map[string]float64{}, turns: map[string]int{},
		stops: map[string]int{}, blockStop: rc.blockStop}
	if r.blockStop == nil {
		r.blockStop = func(string, int) bool { return false }
	}
	fcfg := fakeapi.Config{Policy: rc.policy}
	if rc.holds != nil {
		rc.holds.Configure(&fcfg)
	}
	r.srv = fakeapi.New(fcfg)
	t.Cleanup(r.srv.Close)
	model, err := claude.New(claude.Config{APIKey: "k", BaseURL: r.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := flags.Resolve(flags.Config{CLI: rc.flags})
	if err != nil {
		t.Fatal(err)
	}
	tcfg := task.Config{Home: t.TempDir(), SessionID: "s1"}
	if rc.onTask != nil {
		tcfg.OnEvent = func(ev task.Event) { rc.onTask(r, ev) }
	}
	r.reg, err = task.NewRegistry(tcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = r.reg.Close(ctx)
	})
	r.rt, err = crew.New(crew.Config{
		Model: model, Catalog: agentdef.NewCatalog(agentdef.BuiltIns(fs)), Flags: fs, Tasks: r.reg,
		Cwd: t.TempDir(), SessionID: "s1", Deadline: rc.deadline,
		Environment: prompt.Environment{Platform: "linux", Date: "2026-12-01"},
		Tools: func(rt *crew.Crew) []tool.Tool {
			return append([]tool.Tool{crew.NewAgentTool(crew.AgentToolConfig{Runtime: rt})}, builtin.All(builtin.Config{})...)
		},
		Hooks: func(a *crew.Agent) engine.Hooks { return &recHooks{r: r, id: a.ID()} },
		Sink:  r.sink,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.lead, err = r.rt.NewLead(t.Context(), crew.LeadConfig{Model: leadModel, Mode: "bypassPermissions"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.lead.Close)
	return r
}

func (r *rig) sink(ev engine.Event) {
	if ev.Kind != engine.EventAssistant || ev.Response == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.costs[ev.AgentID] += llm.DefaultPrices.Cost(ev.Response.Model, ev.Response.Usage)
	r.turns[ev.AgentID]++
}

// send runs one lead turn.
func (r *rig) send(text string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.t.Context(), 60*time.Second)
	defer cancel()
	res, err := r.lead.Engine().Send(ctx, []llm.Block{llm.Text(text)}, "")
	if err != nil {
		r.t.Fatalf("lead: %v", err)
	}
	return res.Text
}

// children returns the ids of the agents other than the lead.
func (r *rig) children() []string {
	var ids []string
	for _, a := range r.rt.Agents() {
		if a != r.lead {
			ids = append(ids, a.ID())
		}
	}
	return ids
}

func (r *rig) child() string {
	r.t.Helper()
	ids := r.children()
	if len(ids) != 1 {
		r.t.Fatalf("want one child agent, got %v", ids)
	}
	return ids[0]
}

func (r *rig) hookEvents(id string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events[id]...)
}

// checkMerged checks that the agent's Result sums every response it got:
// its turns, its cost as the sink priced each response, and a duration of
// at least the first-token delay of each.
func (r *rig) checkMerged(id string, wantTurns int, delay time.Duration) {
	r.t.Helper()
	a, ok := r.rt.Lookup(id)
	if !ok {
		r.t.Fatalf("agent %s is not registered", id)
	}
	res := a.Result()
	if res == nil {
		r.t.Fatalf("agent %s has no result", id)
	}
	r.mu.Lock()
	cost, turns := r.costs[id], r.turns[id]
	r.mu.Unlock()
	if turns != wantTurns || res.Turns != wantTurns {
		r.t.Errorf("agent %s: %d responses seen, result counts %d turns; want %d", id, turns, res.Turns, wantTurns)
	}
	if cost == 0 || !near(res.CostUSD, cost) {
		r.t.Errorf("agent %s: result cost %.8f, its responses cost %.8f", id, res.CostUSD, cost)
	}
	if min := time.Duration(wantTurns) * delay; res.Duration < min {
		r.t.Errorf("agent %s: result duration %s, but its %d responses took at least %s", id, res.Duration, wantTurns, min)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }

// recHooks records SubagentStart and SubagentStop for one agent and blocks
// a stop when the rig says so.
type recHooks struct {
	r  *rig
	id string
}

var _ hook.SubagentHooks = (*recHooks)(nil)

func (h *recHooks) PreToolUse(context.Context, *engine.Call) engine.HookVerdict {
	return engine.HookVerdict{}
}
func (h *recHooks) PostToolUse(context.Context, *engine.Call, *tool.Result) string { return "" }

func (h *recHooks) SubagentStart(_ context.Context, prompt string) hook.Outcome {
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	h.r.events[h.id] = append(h.r.events[h.id], "start "+prompt)
	return hook.Outcome{}
}

func (h *recHooks) SubagentStop(_ context.Context, st hook.StopState) hook.Outcome {
	h.r.mu.Lock()
	n := h.r.stops[h.id]
	h.r.stops[h.id]++
	ev := "stop"
	if st.Active {
		ev = "stop again"
	}
	h.r.events[h.id] = append(h.r.events[h.id], ev)
	h.r.mu.Unlock()
	if h.r.blockStop(h.id, n) {
		return hook.Outcome{Block: true, Reason: "check your work once more"}
	}
	return hook.Outcome{}
}

// continued reports whether a request carries the SubagentStop reminder.
func continued(q *fakeapi.Request) bool {
	return strings.Contains(q.LastUserText(), "A SubagentStop hook asks you to continue")
}

func call(name string, input any) fakeapi.Block { return fakeapi.ToolUseBlock("", name, input) }

func reply(blocks ...fakeapi.Block) fakeapi.Reply { return fakeapi.Reply{Content: blocks} }
