package workflowrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cohort-dev/cohort/engine"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/workflow/host"
)

// Config wires workflows into a session.
type Config struct {
	// Runtime spawns the agents (required).
	Runtime *crew.Crew
	// Host says how to start cohort-workflow; the zero value finds it.
	Host host.Config
	// Dir is the session's workflows directory: one directory per run.
	Dir string
	// FindRun finds an earlier run's directory for a resume (it may be in
	// another session's directory: the one that was killed); nil looks in
	// Dir only.
	FindRun func(runID string) (string, error)
	// Roots are where saved workflows are found: the project, then home.
	Roots []string
	// Concurrency caps a run's agents at once (0: the host's default,
	// min(16, CPUs−2)); Budget is a run's USD ceiling (0: none).
	Concurrency int
	Budget      float64
}

// Launch is one run to start: a script (Source, named Name in messages)
// with its args, or a resume of run ResumeRunID (Source then replaces its
// script; empty reruns the run's script.js as it is now).
type Launch struct {
	Source      string
	Name        string
	Args        json.RawMessage
	ResumeRunID string
	// Quiet notifies nobody at the end: the caller waits for the task
	// itself (cohort workflow run).
	Quiet bool
}

// Run is a started workflow run.
type Run struct {
	ID     string // the run id, also its task's name
	Dir    string // its directory: script.js and the journal
	Script string // the script's path, for the model to edit
	Meta   host.Meta

	mu     sync.Mutex
	task   *task.Task
	detail Detail
}

// Task is the run's task.
func (r *Run) Task() *task.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.task
}

// Detail is a run's task detail (task.State.Detail): what Agents and the
// events show of it. A value once set is never changed.
type Detail struct {
	RunID       string
	Name        string
	Description string
	Script      string
	Phases      []string // meta.phases' titles
	Phase       string   // the phase the script is in
	Started     int      // agent() calls made
	Running     int      // agents running now
	Finished    int      // agent() calls answered, replayed ones included
	Replayed    int
	CostUSD     float64 // what its finished agents cost
	Estimate    string  // the estimate made before it started
	Result      *host.Result
}

// Start checks the script in the host, saves it in the run's directory and
// starts the run as a background task below parent; it returns at once.
// Errors are tool.Failure sentences for the model when the script or the
// request is at fault.
func Start(ctx context.Context, cfg Config, parent *crew.Agent, env tool.Env, l Launch) (*Run, error) {
	rt := cfg.Runtime
	if cfg.Dir == "" {
		return nil, errors.New("workflowrun: Config.Dir is required")
	}
	dir, err := cfg.resume(&l)
	if err != nil {
		return nil, err
	}
	id := l.ResumeRunID
	checked, err := host.Check(ctx, cfg.Host, host.CheckRequest{Name: l.Name, Source: l.Source})
	if err != nil {
		if errors.Is(err, host.ErrNoHost) || errors.Is(err, host.ErrProtocol) {
			return nil, err
		}
		return nil, tool.Failf("The workflow script was not started: %v", err)
	}
	if dir == "" {
		if id, dir, err = host.NewRun(cfg.Dir, l.Source); err != nil {
			return nil, err
		}
	} else if err := os.WriteFile(filepath.Join(dir, host.ScriptName), []byte(l.Source), 0o600); err != nil {
		return nil, fmt.Errorf("save the workflow script: %w", err)
	}
	r := &Run{ID: id, Dir: dir, Script: filepath.Join(dir, host.ScriptName), Meta: checked.Meta}
	r.detail = Detail{RunID: id, Name: checked.Meta.Name, Description: checked.Meta.Description, Script: r.Script,
		Estimate: estimateText(rt, parent.Info().Model, checked)}
	for _, p := range checked.Meta.Phases {
		r.detail.Phases = append(r.detail.Phases, p.Title)
	}
	if env.Files == nil {
		env.Files = tool.NewFileCache()
	} else {
		env.Files = env.Files.Clone()
	}
	req := host.RunRequest{Name: l.Name, Source: l.Source, Args: l.Args, Dir: dir, Resume: l.ResumeRunID != "",
		Roots: cfg.Roots, Concurrency: cfg.Concurrency, Budget: cfg.Budget}
	sp := &spawner{rt: rt, parent: parent, env: env, run: r}
	spec := task.Spec{Name: id, Kind: task.KindWorkflow, Description: checked.Meta.Name, Prompt: checked.Meta.Description,
		ToolUseID: env.ToolUseID, ParentAgentID: parent.ID(), Queue: rt.Queue(parent.ID()), Background: true}
	if l.Quiet {
		spec.Queue = nil
	}
	first := r.detail
	spec.Detail = &first
	t, err := rt.Tasks().Start(ctx, spec, func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		return r.body(ctx, cfg.Host, req, sp, t)
	})
	if err != nil {
		return nil, fmt.Errorf("start the workflow task: %w", err)
	}
	r.setTask(t)
	return r, nil
}

// resume finds the directory of the run l resumes (none for a new run)
// and, when l brings no script, takes the run's script.js as it is now.
func (cfg Config) resume(l *Launch) (string, error) {
	if l.ResumeRunID == "" {
		return "", nil
	}
	dir, err := cfg.runDir(l.ResumeRunID)
	if err != nil {
		return "", tool.Failf("Cannot resume: %v.", err)
	}
	if l.Source == "" {
		path := filepath.Join(dir, host.ScriptName)
		src, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read the run's script: %w", err)
		}
		l.Source, l.Name = string(src), path
	}
	if t, ok := cfg.Runtime.Tasks().Get(l.ResumeRunID); ok && t.Kind() == task.KindWorkflow && !t.State().Status.Terminal() {
		return "", tool.Failf("Run %s is still running; stop it (TaskStop) before resuming it.", l.ResumeRunID)
	}
	return dir, nil
}

func (cfg Config) runDir(id string) (string, error) {
	if cfg.FindRun != nil {
		return cfg.FindRun(id)
	}
	return host.RunDir(cfg.Dir, id)
}

// body runs the script in the host until it ends.
func (r *Run) body(ctx context.Context, hc host.Config, req host.RunRequest, sp *spawner, t *task.Task) (task.Outcome, error) {
	r.setTask(t)
	res, err := host.Run(ctx, hc, req, sp, func(e host.Event) { r.event(t, e) })
	r.publish(func(d *Detail) { d.Result = &res })
	if err != nil {
		if res.Agents > 0 {
			return task.Outcome{}, fmt.Errorf("%v (after %d agent calls costing $%.4f)", err, res.Agents, res.Cost)
		}
		return task.Outcome{}, err
	}
	return task.Outcome{Text: ResultText(res)}, nil
}

// event follows the run's progress: the task's phase and detail, a line
// in its output, and an agent() start as one of its "tool uses".
func (r *Run) event(t *task.Task, e host.Event) {
	switch e.Kind {
	case "phase":
		t.SetPhase(e.Text)
		r.publish(func(d *Detail) { d.Phase = e.Text })
		_ = t.Output().WriteLine("phase: " + e.Text)
	case "log":
		_ = t.Output().WriteLine("log: " + e.Text)
	case "agent_start":
		r.publish(func(d *Detail) { d.Started++ })
		t.RecordToolUse(crew.AgentToolName, stepName(e))
	case "agent_end":
		r.publish(func(d *Detail) {
			d.Finished++
			if e.Replayed {
				d.Replayed++
			}
		})
		how := "answered"
		if e.Replayed {
			how = "replayed from the journal"
		}
		_ = t.Output().WriteLine(fmt.Sprintf("agent %d %s: %s", e.Seq, how, stepName(e)))
	}
}

func stepName(e host.Event) string {
	switch {
	case e.Text != "":
		return e.Text
	case e.Phase != "":
		return fmt.Sprintf("%s #%d", e.Phase, e.Seq)
	}
	return fmt.Sprintf("step #%d", e.Seq)
}

// setTask records the run's task (from Start, or from its body, whichever
// comes first) and gives it the detail.
func (r *Run) setTask(t *task.Task) {
	r.mu.Lock()
	r.task = t
	r.mu.Unlock()
	r.publish(func(*Detail) {})
}

// publish changes the detail and sets a fresh copy on the task.
func (r *Run) publish(change func(*Detail)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change(&r.detail)
	if r.task != nil {
		d := r.detail
		d.Phases = append([]string(nil), d.Phases...)
		r.task.SetDetail(&d)
	}
}

// ResultText is a finished run as its notification reports it: the
// script's return value, then what its agents cost, per phase.
func ResultText(res host.Result) string {
	var b strings.Builder
	b.Write(res.Value)
	fmt.Fprintf(&b, "\n\nAgents: %d (%d run, %d replayed from the journal). Cost: $%.4f", res.Agents, res.Live, res.Replayed, res.Cost)
	var parts []string
	for _, p := range res.Phases {
		title := p.Title
		if title == "" {
			title = "(no phase)"
		}
		parts = append(parts, fmt.Sprintf("%s $%.4f (%d agents)", title, p.Cost, p.Agents))
	}
	if len(parts) > 0 {
		b.WriteString(" — " + strings.Join(parts, ", "))
	}
	b.WriteString(".")
	return b.String()
}

// stepStopWait bounds the wait for a stopped step's agent to end.
const stepStopWait = 30 * time.Second

// spawner spawns a run's agent() calls on the runtime's one spawn path.
type spawner struct {
	rt     *crew.Crew
	parent *crew.Agent
	env    tool.Env // the starting call's, with its own file cache
	run    *Run
}

func (s *spawner) Spawn(ctx context.Context, req host.AgentRequest) (host.AgentResult, error) {
	name := req.AgentType
	if name == "" {
		name = agentdef.GeneralPurpose
	}
	def, ok := s.rt.Catalog().Get(name)
	if !ok {
		return host.AgentResult{}, fmt.Errorf("agent(): unknown agentType %q", name)
	}
	env := s.env
	env.Files = s.env.Files.Clone()
	desc := req.Label
	if desc == "" {
		desc = firstWords(req.Prompt, 6)
	}
	rreq := crew.Request{Description: desc, Prompt: req.Prompt, Def: def,
		Model: req.Model, Isolation: req.Isolation, Workflow: s.run.Task().ID()}
	var (
		t     *task.Task
		child *crew.Agent // nil for a remote step: its worker pays for it
	)
	if req.Isolation == "remote" {
		rt, err := s.rt.SpawnRemote(ctx, s.parent, &env, rreq)
		if err != nil {
			return host.AgentResult{}, err
		}
		t = rt
	} else {
		sp, err := s.rt.Spawn(ctx, s.parent, &env, rreq)
		if err != nil {
			return host.AgentResult{}, err
		}
		t, child = sp.Task, sp.Agent
	}
	s.run.publish(func(d *Detail) { d.Running++ })
	select {
	case <-t.Done():
	case <-ctx.Done():
		_ = s.rt.Tasks().Kill(t.ID())
		select {
		case <-t.Done():
		case <-time.After(stepStopWait):
		}
	}
	var cost float64
	if child != nil {
		_, cost = child.Usage()
	} else {
		cost = s.remoteCost(t.State(), def, req.Model)
	}
	s.run.publish(func(d *Detail) { d.Running--; d.CostUSD += cost })
	st := t.State()
	if st.Status != task.StatusCompleted {
		return host.AgentResult{Cost: cost}, fmt.Errorf("agent %s %s: %s", st.ID, st.Status, st.Err)
	}
	if child != nil {
		// An agent a spend cap stopped (before its first request, when the
		// cap could not pay for one) did not do its step: the script's
		// next agent() throws (host.AgentResult.Capped).
		if r := child.Result(); r != nil && r.Stop == engine.StopBudget {
			why := "a spend cap was reached"
			if r.Capped != nil {
				why = r.Capped.Error()
			}
			return host.AgentResult{Cost: cost, Capped: why}, nil
		}
	}
	var text string
	if st.Result != nil {
		text = st.Result.Text
	}
	return host.AgentResult{Text: text, Cost: cost}, nil
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = append(f[:n], "…")
	}
	return strings.Join(f, " ")
}

// remoteCost prices a remote step for the run's budget: its worker reports
// tokens, not dollars, nor what it read from the cache, so its input is
// priced as uncached (the budget errs on the safe side).
func (s *spawner) remoteCost(st task.State, def *agentdef.Definition, model string) float64 {
	out := st.Progress.OutputTokens
	in := int64(0)
	if st.Result != nil {
		in = max(st.Result.TotalTokens-out, 0)
	}
	return s.rt.Prices().Cost(s.rt.RemoteModel(s.parent, def, model), llm.Usage{InputTokens: in, OutputTokens: out})
}
