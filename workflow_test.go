package cohort

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

const reviewFlow = `export const meta = {
  name: "review-then-verify",
  description: "Review each file for bugs, then have a second agent verify each finding",
  phases: [{title: "review"}, {title: "verify"}],
}
phase("review")
const out = await pipeline(args.files,
  (f) => agent("wf-review " + f, {label: "review " + f}),
  (finding, f) => agent("wf-verify " + finding, {label: "verify " + f, phase: "verify"}))
return {verified: out}
`

// workflowEnv is a session with the Workflow tool on, the real host
// program, and a lead that runs script when told "run the workflow".
func workflowEnv(t *testing.T, script string) (*env, Config) {
	e := newEnv(t)
	e.rt.on("run the workflow", func(r *fakeapi.Request) fakeapi.Reply {
		last := r.LastUserText()
		switch {
		case strings.Contains(last, "<task-notification>"):
			return fakeapi.TextReply("the workflow reported: " + last)
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Workflow", map[string]any{"script": script,
				"args": map[string]any{"files": []string{"a.go", "b.go"}}})}}
		}
		return fakeapi.TextReply("started; waiting for it")
	})
	cfg := e.config()
	cfg.Flags = []string{"workflows=on"}
	cfg.WorkflowHost = testbin.Workflow(t, raceEnabled)
	cfg.StopAfterRun = true
	return e, cfg
}

// A workflow run through the Workflow tool spawns real subagents (their
// requests reach the fake API), notifies the lead with the script's return
// value and cost per phase, and shows as one node in Agents and the events.
func TestWorkflowToolRunsRealSubagents(t *testing.T) {
	t.Parallel()
	e, cfg := workflowEnv(t, reviewFlow)
	var mu sync.Mutex
	var reasons []string
	cfg.CanUseTool = func(ctx context.Context, req PermissionRequest) (Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		reasons = append(reasons, req.Tool+": "+req.Reason)
		return Decision{Allow: true}, nil
	}
	e.rt.on("wf-review", func(r *fakeapi.Request) fakeapi.Reply {
		f := strings.Fields(r.FirstUserText()[strings.Index(r.FirstUserText(), "wf-review"):])[1]
		return fakeapi.TextReply("bug-in-" + f)
	})
	e.rt.on("wf-verify", func(r *fakeapi.Request) fakeapi.Reply {
		f := strings.Fields(r.FirstUserText()[strings.Index(r.FirstUserText(), "wf-verify"):])[1]
		return fakeapi.TextReply("confirmed " + f)
	})
	s := e.open(cfg)
	evs := collect(t, s, "run the workflow")

	res := last(evs)
	var listed float64
	for _, u := range res.Agents {
		if u.Kind == "workflow" {
			t.Errorf("the result's per-agent list has the run's node: %+v", u)
		}
		listed += u.CostUSD
	}
	if math.Abs(listed-res.TotalCostUSD) > 1e-9 {
		t.Errorf("the per-agent costs add up to %v, the total is %v", listed, res.TotalCostUSD)
	}
	if !strings.Contains(res.Result, `{"verified":["confirmed bug-in-a.go","confirmed bug-in-b.go"]}`) {
		t.Fatalf("the lead's notification did not carry the return value: %q", res.Result)
	}
	if !strings.Contains(res.Result, "review $") || !strings.Contains(res.Result, "verify $") {
		t.Errorf("no cost per phase in the notification: %q", res.Result)
	}
	mu.Lock()
	if len(reasons) != 1 || !strings.Contains(reasons[0], "Review each file for bugs, then have a second agent verify each finding") ||
		!strings.Contains(reasons[0], "Estimate: at least 2 agents") {
		t.Errorf("permission prompts: %q; want one for Workflow showing meta.description and an estimate", reasons)
	}
	mu.Unlock()

	// The events: the run's task, and its four agents as its children.
	var runID string
	kids := 0
	for _, ev := range evs {
		if ev.Subtype != "task_started" {
			continue
		}
		if ev.TaskType == "local_workflow" {
			runID = ev.TaskID
		} else if runID != "" && ev.ParentTaskID == runID {
			kids++
		}
	}
	if runID == "" || kids != 4 {
		t.Fatalf("task_started events: run %q with %d children; want a local_workflow task and its 4 agents", runID, kids)
	}

	// Agents: one node for the run, just before its agents, which point
	// at it.
	var node *AgentInfo
	agents := s.Agents()
	steps := 0
	for i, a := range agents {
		if a.Kind == "workflow" {
			node = &agents[i]
			if i+1 >= len(agents) || agents[i+1].ParentID != a.ID {
				t.Errorf("the run's node is not just before its agents")
			}
		}
		if a.ParentID == runID && a.Kind == "background" {
			steps++
		}
	}
	if node == nil || node.ID != runID || node.Workflow == nil || steps != 4 {
		t.Fatalf("Agents: node %+v, %d steps; want the run %s with 4 agents", node, steps, runID)
	}
	w := node.Workflow
	if node.State != AgentCompleted || w.Started != 4 || w.Finished != 4 || len(w.Phases) != 2 || len(w.PhaseCosts) != 2 ||
		string(w.Value) != `{"verified":["confirmed bug-in-a.go","confirmed bug-in-b.go"]}` {
		t.Errorf("the run's node: %+v %+v", node, w)
	}
	// Cost accounting: the run's cost is its agents' cost, phase by phase.
	var stepCost, phaseCost float64
	for _, a := range agents {
		if a.ParentID == runID {
			stepCost += a.CostUSD
		}
	}
	for _, p := range w.PhaseCosts {
		phaseCost += p.Cost
	}
	if stepCost == 0 || math.Abs(node.CostUSD-stepCost) > 1e-9 || math.Abs(phaseCost-stepCost) > 1e-9 {
		t.Errorf("costs: run %v, its agents %v, its phases %v; want them equal and non-zero", node.CostUSD, stepCost, phaseCost)
	}
	if data, err := os.ReadFile(w.Script); err != nil || string(data) != reviewFlow {
		t.Errorf("the run's script copy %s: %v", w.Script, err)
	}
	journal, _ := os.ReadFile(filepath.Join(filepath.Dir(w.Script), "journal.jsonl"))
	if n := strings.Count(string(journal), `"type":"end"`); n != 4 {
		t.Errorf("the journal has %d finished steps, want 4", n)
	}
	var value map[string]any
	if err := json.Unmarshal(w.Value, &value); err != nil {
		t.Error(err)
	}
}

// The permission rules hold inside workflow agents: an agent that tries a
// denied Bash command is refused, and the command never runs, even though
// the approver would allow anything it is asked.
func TestWorkflowAgentsObeyDenyRules(t *testing.T) {
	t.Parallel()
	const attack = "export const meta = {name: \"attack\", description: \"one agent\"}\nreturn await agent(\"wf-attack now\")\n"
	e, cfg := workflowEnv(t, attack)
	pwned := filepath.Join(e.dir, "pwned")
	cfg.DisallowedTools = []string{"Bash(touch:*)"}
	cfg.CanUseTool = func(ctx context.Context, req PermissionRequest) (Decision, error) {
		return Decision{Allow: true}, nil
	}
	e.rt.on("wf-attack", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "touch " + pwned})}}
		}
		return fakeapi.TextReply("bash said: " + r.LastToolResultText())
	})
	res := last(collect(t, e.open(cfg), "run the workflow"))
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the denied command ran inside a workflow agent")
	}
	if !strings.Contains(res.Result, "bash said: Permission denied") {
		t.Fatalf("the workflow agent was not told its command was denied: %q", res.Result)
	}
}

const twoStages = `export const meta = {name: "stages", description: "two stages"}
const out = await pipeline(["a", "b", "c"],
  (x) => agent("wfs one " + x),
  (r, x) => agent("wfs two " + r))
return out
`

// Editing a run's script.js and resuming it replays the unchanged calls
// from the journal and runs live from the first changed one.
func TestWorkflowResumeAfterAnEdit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int64
	e.rt.on("wfs ", func(r *fakeapi.Request) fakeapi.Reply {
		calls.Add(1)
		first := r.FirstUserText()
		return fakeapi.TextReply("<" + strings.SplitN(first[strings.Index(first, "wfs ")+4:], "\n", 2)[0] + ">")
	})
	cfg := e.config()
	cfg.WorkflowHost = testbin.Workflow(t, raceEnabled)
	s := e.open(cfg)
	path := filepath.Join(e.dir, "flow.js")
	os.WriteFile(path, []byte(twoStages), 0o644)
	if res := runWorkflow(t, s, WorkflowRequest{Script: path}); res.IsError || !strings.HasPrefix(res.Result, `["<two <one a>>","<two <one b>>","<two <one c>>"]`) {
		t.Fatalf("first run: %q", res.Result)
	}
	var run *WorkflowInfo
	for _, a := range s.Agents() {
		if a.Workflow != nil {
			run = a.Workflow
		}
	}
	if run == nil || calls.Load() != 6 {
		t.Fatalf("after the first run: %d calls, run %+v", calls.Load(), run)
	}
	edited := strings.Replace(twoStages, `agent("wfs two " + r)`, `agent("wfs check " + r)`, 1)
	if err := os.WriteFile(run.Script, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runWorkflow(t, s, WorkflowRequest{Resume: run.RunID})
	if res.IsError || !strings.HasPrefix(res.Result, `["<check <one a>>","<check <one b>>","<check <one c>>"]`) {
		t.Fatalf("resumed run: %q", res.Result)
	}
	if live := calls.Load() - 6; live != 3 || !strings.Contains(res.Result, "3 replayed") {
		t.Fatalf("the resumed run called the model %d times (%q); want the 3 edited calls only", live, res.Result)
	}
}

// Closing the session while a workflow runs stops it: Close returns, and
// the host process is gone.
func TestCloseStopsARunningWorkflow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("wfs ", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("late")
	})
	// A copy of the host of this test's own, to tell its processes apart.
	hostBin := filepath.Join(t.TempDir(), "cohort-workflow")
	data, err := os.ReadFile(testbin.Workflow(t, raceEnabled))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostBin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.WorkflowHost = hostBin
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "flow.js")
	os.WriteFile(path, []byte(twoStages), 0o644)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range s.RunWorkflow(ctx, WorkflowRequest{Script: path}) {
		}
	}()
	g.await(t)
	if n := processesOf(hostBin); n != 1 {
		t.Fatalf("%d host processes while the workflow runs, want 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("RunWorkflow did not return after Close")
	}
	if n := processesOf(hostBin); n != 0 {
		t.Fatalf("%d host processes after Close, want none", n)
	}
}

// processesOf counts the live processes running the program at path.
func processesOf(path string) int {
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	n := 0
	for _, exe := range exes {
		if target, err := os.Readlink(exe); err == nil && target == path {
			stat, _ := os.ReadFile(filepath.Join(filepath.Dir(exe), "stat"))
			if !strings.Contains(string(stat), ") Z ") {
				n++
			}
		}
	}
	return n
}

// A script that cannot start is the Workflow call's is_error result, with
// the line to fix, before any agent starts.
func TestWorkflowToolRefusesABadScript(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, script, want string }{
		{"does not parse", "export const meta = {name: \"x\", description: \"d\"}\nconst = 1\n", "workflow.js:2"},
		{"meta is not a literal", "const d = \"d\"\nexport const meta = {name: \"x\", description: d}\nawait agent(\"wfs one\")\n", "pure literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, cfg := workflowEnv(t, tc.script)
			cfg.AllowedTools = []string{"Workflow"}
			var agents atomic.Int64
			e.rt.on("wfs ", func(r *fakeapi.Request) fakeapi.Reply { agents.Add(1); return fakeapi.TextReply("x") })
			var toolResult string
			isError := false
			for _, ev := range collect(t, e.open(cfg), "run the workflow") {
				if ev.Type != "user" || ev.Message == nil {
					continue
				}
				for _, b := range ev.Message.Content {
					if b.Type == llm.BlockToolResult {
						toolResult, isError = llm.JoinText(b.Content), b.IsError
					}
				}
			}
			if !isError || !strings.Contains(toolResult, tc.want) {
				t.Fatalf("the Workflow call's result: %s\nwant an error naming %q", toolResult, tc.want)
			}
			if agents.Load() != 0 {
				t.Fatalf("%d agents ran", agents.Load())
			}
		})
	}
}

// StopAgent on a workflow run's node stops the run and its agents.
func TestStopAgentStopsAWorkflowRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("wfs ", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("late")
	})
	cfg := e.config()
	cfg.WorkflowHost = testbin.Workflow(t, raceEnabled)
	s := e.open(cfg)
	path := filepath.Join(e.dir, "flow.js")
	os.WriteFile(path, []byte(twoStages), 0o644)
	results := make(chan Event, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var last Event
		for ev := range s.RunWorkflow(ctx, WorkflowRequest{Script: path}) {
			last = ev
		}
		results <- last
	}()
	g.await(t)
	var node AgentInfo
	for _, a := range s.Agents() {
		if a.Kind == "workflow" {
			node = a
		}
	}
	if node.ID == "" || node.State != AgentRunning {
		t.Fatalf("no running workflow node: %+v", s.Agents())
	}
	if err := s.StopAgent(node.Name); err != nil { // by its run id
		t.Fatalf("StopAgent(%s): %v", node.Name, err)
	}
	var res Event
	select {
	case res = <-results:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end after StopAgent")
	}
	if !res.IsError || !strings.Contains(res.Result, "killed") {
		t.Fatalf("result after StopAgent: %+v", res)
	}
	for _, a := range s.Agents() {
		if a.ParentID == node.ID && a.State == AgentRunning {
			t.Errorf("agent %s of the stopped run still runs", a.ID)
		}
	}
}

// The session's hooks run for workflow agents: SubagentStart and
// SubagentStop once per agent, PreToolUse for their tool calls — and a
// PreToolUse hook's block holds inside a workflow too.
func TestWorkflowAgentsRunTheSessionsHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pwned := filepath.Join(e.dir, "pwned")
	e.rt.on("wfh ", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": pwned, "content": "x"})}}
		}
		return fakeapi.TextReply("write said: " + r.LastToolResultText())
	})
	var mu sync.Mutex
	fired := map[string]int{}
	count := func(event string, out string) Hook {
		return Hook{Event: event, Func: func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			mu.Lock()
			fired[event]++
			mu.Unlock()
			if out == "" {
				return nil, nil
			}
			return json.RawMessage(out), nil
		}}
	}
	cfg := e.config()
	cfg.WorkflowHost = testbin.Workflow(t, raceEnabled)
	cfg.PermissionMode = "bypassPermissions"
	cfg.Hooks = []Hook{count("SubagentStart", ""), count("SubagentStop", ""),
		count("PreToolUse", `{"decision": "block", "reason": "no writes in this test"}`)}
	path := filepath.Join(e.dir, "flow.js")
	os.WriteFile(path, []byte("export const meta = {name: \"h\", description: \"d\"}\nreturn await parallel([1, 2].map(i => () => agent(\"wfh \" + i)))\n"), 0o644)
	res := runWorkflow(t, e.open(cfg), WorkflowRequest{Script: path})
	if res.IsError || strings.Count(res.Result, "no writes in this test") != 2 {
		t.Fatalf("result: %q; want both agents told the hook blocked their Write", res.Result)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the Write a hook blocked ran")
	}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(map[string]int{"SubagentStart": 2, "SubagentStop": 2, "PreToolUse": 2}, fired); d != "" {
		t.Errorf("hooks fired (-want +got):\n%s", d)
	}
}
