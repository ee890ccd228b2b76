package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/trace"
)

// TestRealEngineAndTasks runs a lead and three subagents on the real
// engine and task registry — the lead's three Agent calls in parallel,
// each subagent's two tool calls in parallel — with the writer as their
// sink, as the CLI wires it, and checks the file: one track per agent,
// lanes for the parallel calls, everything nested and finished.
func TestRealEngineAndTasks(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.json")
	w, err := trace.Create(path, trace.Config{Session: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	reg, err := task.NewRegistry(task.Config{Home: t.TempDir(), SessionID: "e2e", OnEvent: w.Task})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := reg.Close(ctx); err != nil {
			t.Error(err)
		}
	}()

	spawn := &spawner{reg: reg, sink: w.Engine, started: newBarrier(3)}
	lead := engine.New(engine.Config{Model: script{}, ModelName: "m", Tools: []tool.Tool{spawn},
		Env: tool.Env{Caller: tool.Caller{ID: "lead"}}, Sink: w.Engine, MaxParallelTools: 8})
	res, err := lead.Send(t.Context(), []llm.Block{llm.Text("lead: split the work")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all done" {
		t.Fatalf("lead ended with %q", res.Text)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := trace.Validate(f)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range sum.Tracks {
		names = append(names, tr.Name)
		switch {
		case strings.Contains(tr.Name, " · tools "):
			if tr.Spans["tool"] != 1 {
				t.Errorf("%s: %v, want one tool call", tr.Name, tr.Spans)
			}
		default:
			want := map[string]int{"agent": 1, "turn": 2, "model": 2}
			if diff := cmp.Diff(want, tr.Spans); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tr.Name, diff)
			}
		}
	}
	if names[0] != "lead" {
		t.Errorf("first track %q, want lead", names[0])
	}
	slices.Sort(names)
	want := []string{"general-purpose: worker 1", "general-purpose: worker 1 · tools 1", "general-purpose: worker 1 · tools 2",
		"general-purpose: worker 2", "general-purpose: worker 2 · tools 1", "general-purpose: worker 2 · tools 2",
		"general-purpose: worker 3", "general-purpose: worker 3 · tools 1", "general-purpose: worker 3 · tools 2",
		"lead", "lead · tools 1", "lead · tools 2", "lead · tools 3"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tracks (-want +got):\n%s", diff)
	}
	if sum.Unfinished != 0 || sum.Truncated {
		t.Errorf("unfinished %d, truncated %v", sum.Unfinished, sum.Truncated)
	}
}

// script is the model: the lead asks for three agents, each agent for two
// probes, then everyone answers.
type script struct{}

func (script) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		first := req.Messages[0].TextContent()
		followUp := len(req.Messages) > 1
		resp := &llm.Response{Model: "m", StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}
		switch {
		case followUp && strings.HasPrefix(first, "lead"):
			resp.Content, resp.StopReason = []llm.Block{llm.Text("all done")}, llm.StopEndTurn
		case followUp:
			resp.Content, resp.StopReason = []llm.Block{llm.Text("report")}, llm.StopEndTurn
		case strings.HasPrefix(first, "lead"):
			for i := 1; i <= 3; i++ {
				in := fmt.Sprintf(`{"description":"worker %d","prompt":"worker %d: look"}`, i, i)
				resp.Content = append(resp.Content, llm.ToolUse(fmt.Sprintf("call-%d", i), "Agent", json.RawMessage(in)))
			}
		default:
			for i := 1; i <= 2; i++ {
				resp.Content = append(resp.Content, llm.ToolUse(fmt.Sprintf("probe-%s-%d", first[:8], i), "Probe", json.RawMessage(`{}`)))
			}
		}
		if !yield(llm.Event{Type: llm.EventDelta, DeltaKind: llm.DeltaText, Delta: "…"}, nil) {
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: resp}, nil)
	}
}

// spawner is a minimal Agent tool: it runs a subagent on the engine as a
// foreground task and returns its text.
type spawner struct {
	reg     *task.Registry
	sink    engine.Sink
	started *barrier // the three subagents run at the same time
}

func (s *spawner) Def() llm.ToolDef {
	return llm.ToolDef{Name: "Agent", Description: "start a subagent",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"description":{"type":"string"},"prompt":{"type":"string"}}}`)}
}

func (s *spawner) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true}
}

func (s *spawner) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct{ Description, Prompt string }
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{}, err
	}
	id := "agent-" + env.ToolUseID
	spec := task.Spec{Kind: task.KindLocalAgent, Description: in.Description, Prompt: in.Prompt,
		SubagentType: "general-purpose", AgentID: id, ToolUseID: env.ToolUseID, Linked: true}
	tk, err := s.reg.Start(ctx, spec, func(ctx context.Context, _ *task.Task) (task.Outcome, error) {
		if !s.started.wait(ctx) {
			return task.Outcome{}, fmt.Errorf("the subagents did not run together")
		}
		probes := &probe{both: newBarrier(2)}
		child := engine.New(engine.Config{Model: script{}, ModelName: "m", Tools: []tool.Tool{probes},
			Env: tool.Env{Caller: tool.Caller{ID: id}}, ParentToolUseID: env.ToolUseID, Sink: s.sink, MaxParallelTools: 4})
		res, err := child.Send(ctx, []llm.Block{llm.Text(in.Prompt)}, "")
		if err != nil {
			return task.Outcome{}, err
		}
		return task.Outcome{Text: res.Text}, nil
	})
	if err != nil {
		return tool.Result{}, err
	}
	st, err := tk.Await(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Text(st.Result.Text), nil
}

// probe is a read-only tool whose two calls wait for each other, so they
// overlap.
type probe struct{ both *barrier }

func (p *probe) Def() llm.ToolDef {
	return llm.ToolDef{Name: "Probe", Description: "look", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (p *probe) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true}
}

func (p *probe) Run(ctx context.Context, _ *tool.Env, _ json.RawMessage) (tool.Result, error) {
	if !p.both.wait(ctx) {
		return tool.Errorf("the calls did not overlap"), nil
	}
	return tool.Text("seen"), nil
}

// barrier releases its waiters once n have arrived, or fails them when
// ctx ends or after a deadline.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	select {
	case <-b.open:
		return true
	case <-ctx.Done():
		return false
	}
}
