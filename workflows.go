package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/workflow/host"
	"github.com/cohort-dev/cohort/workflowrun"
)

// workflowConfig wires workflows into the session: runs are kept in the
// session's directory, saved workflows found below the cwd, the project
// root and the home directory, and MaxBudgetUSD is each run's budget
// (the script's budget.total: agent() throws once it is spent).
func (s *Session) workflowConfig(rt *crew.Crew) workflowrun.Config {
	roots := []string{s.cwd}
	if s.projectRoot != s.cwd {
		roots = append(roots, s.projectRoot)
	}
	if s.env.Home != "" {
		roots = append(roots, s.env.Home)
	}
	return workflowrun.Config{Runtime: rt, Host: workflowHost(s.cfg),
		Dir: filepath.Join(s.projectDir, s.id, "workflows"), Roots: roots, FindRun: s.findRun,
		Budget: s.o.maxBudgetUSD}
}

// WorkflowInfo is a workflow run as Agents shows it: the node of kind
// "workflow" (its ID is the run's task id, its Name the run id); its
// agents' ParentID is the node's ID.
type WorkflowInfo struct {
	RunID  string
	Script string // the run's copy of the script
	// Estimate is what its agents were expected to cost at least, before
	// it started.
	Estimate string
	Phases   []string // meta.phases' titles
	Phase    string   // the phase the script is in now
	// Started counts agent() calls, Running the agents working now,
	// Finished the calls answered, Replayed those the journal answered.
	Started, Running, Finished, Replayed int
	// Value is the script's return value once it has finished; Phases'
	// costs are in PhaseCosts.
	Value      []byte
	PhaseCosts []host.PhaseCost
}

// withWorkflows adds a node for each workflow run of the session, just
// before its first agent, and points its agents at it.
func (s *Session) withWorkflows(out []AgentInfo) []AgentInfo {
	if s.rt == nil {
		return out
	}
	var runs []AgentInfo
	for _, st := range s.rt.Tasks().List() {
		d, ok := st.Detail.(*workflowrun.Detail)
		if st.Kind != task.KindWorkflow || !ok {
			continue
		}
		w := &WorkflowInfo{RunID: d.RunID, Script: d.Script, Estimate: d.Estimate, Phases: d.Phases, Phase: d.Phase,
			Started: d.Started, Running: d.Running, Finished: d.Finished, Replayed: d.Replayed}
		if d.Result != nil {
			w.Value, w.PhaseCosts = d.Result.Value, d.Result.Phases
		}
		info := AgentInfo{ID: st.ID, Name: d.RunID, Kind: "workflow", Type: d.Name, State: taskState(st.Status),
			Description: d.Description, TaskID: st.ID, InProcess: true, CostUSD: d.CostUSD, ToolUses: d.Started,
			Started: st.StartTime, Ended: st.EndTime, Workflow: w}
		if a, ok := s.rt.Lookup(st.ParentID); ok {
			info.ParentID = a.ID()
		} else if p, ok := s.rt.Tasks().Get(st.ParentID); ok {
			info.ParentID = p.State().AgentID
		}
		for _, act := range st.Progress.Activities {
			info.Activities = append(info.Activities, Activity(act))
		}
		runs = append(runs, info)
	}
	for _, run := range runs {
		at := len(out)
		for i := range out {
			if out[i].workflowRun == run.ID {
				out[i].ParentID = run.ID
				at = min(at, i)
			}
		}
		out = slices.Insert(out, at, run)
	}
	return out
}

// WorkflowHostEnv names the environment variable that points at the
// cohort-workflow program when Config.WorkflowHost is empty.
const WorkflowHostEnv = "COHORT_WORKFLOW_HOST"

// WorkflowRequest is a workflow to run outside a conversation (cohort
// workflow run and resume): no lead model is asked anything.
type WorkflowRequest struct {
	// Script is a saved workflow's name, or the path of a script file (it
	// has a slash or ends in .js; relative to the session's directory).
	Script string
	// Args are the script's args, verbatim JSON.
	Args json.RawMessage
	// Resume is the id of a run to resume from its journal: of this
	// session, or of an earlier one of the project (one that was killed).
	// Its script.js is rerun as it is now, unless Script replaces it.
	Resume string
}

// RunWorkflow runs a workflow script in the session and yields the events
// of its task and its agents until it ends, then a result whose text is
// the script's return value and the cost per phase (IsError when the
// script failed, with the line it failed at).
func (s *Session) RunWorkflow(ctx context.Context, req WorkflowRequest) iter.Seq2[Event, error] {
	return s.serve(ctx, false, func(ctx context.Context, _ string) Event {
		start := time.Now()
		r := Event{Type: EventResult, Subtype: engine.StopSuccess}
		st, err := s.workflowNow(ctx, req)
		switch {
		case err != nil:
			r.Subtype, r.IsError, r.Result = engine.StopExecution, true, err.Error()
		case st.Status != task.StatusCompleted:
			r.Subtype, r.IsError, r.Result = engine.StopExecution, true, "workflow run "+st.ID+" "+string(st.Status)+": "+st.Err
		default:
			r.Result = st.Result.Text
		}
		usage, cost, byModel := s.spending()
		r.Usage, r.TotalCostUSD, r.ModelUsage = &usage, cost, byModel
		r.DurationMs = time.Since(start).Milliseconds()
		r.SessionID, r.UUID, r.Time = s.id, transcript.NewID(), time.Now()
		return r
	})
}

// workflowNow starts one run below the lead and waits for it.
func (s *Session) workflowNow(ctx context.Context, req WorkflowRequest) (task.State, error) {
	wc := s.workflowConfig(s.rt)
	l := workflowrun.Launch{Args: req.Args, ResumeRunID: req.Resume, Quiet: true}
	if req.Script != "" {
		path := req.Script
		if !strings.ContainsRune(path, '/') && !strings.HasSuffix(path, ".js") {
			p, err := host.FindSaved(path, wc.Roots...)
			if err != nil {
				return task.State{}, err
			}
			path = p
		} else if !filepath.IsAbs(path) {
			path = filepath.Join(s.cwd, path)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return task.State{}, fmt.Errorf("read the workflow script: %w", err)
		}
		l.Source, l.Name = string(src), path
	}
	lead := s.mainAgent()
	r, err := workflowrun.Start(ctx, wc, lead, tool.Env{Caller: lead.Info(), SessionID: s.id}, l)
	if err != nil {
		return task.State{}, err
	}
	t := r.Task()
	select {
	case <-t.Done():
	case <-ctx.Done():
		stop, cancel := context.WithTimeout(context.Background(), controlWait)
		defer cancel()
		_, _ = s.tasks.Stop(stop, t.ID())
		<-t.Done()
	}
	return t.State(), nil
}

// findRun finds a run's directory: this session's, else that of the
// project's other session which has it (a run id is drawn at random, so
// at most one does).
func (s *Session) findRun(id string) (string, error) {
	if !host.ValidRunID(id) {
		return "", fmt.Errorf("%q is not a workflow run id (wf and 16 hex digits)", id)
	}
	if dir, err := host.RunDir(filepath.Join(s.projectDir, s.id, "workflows"), id); err == nil {
		return dir, nil
	}
	found, _ := filepath.Glob(filepath.Join(s.projectDir, "*", "workflows", id, host.ScriptName))
	if len(found) == 0 {
		return "", fmt.Errorf("no workflow run %s in this project's sessions (%s)", id, s.projectDir)
	}
	return filepath.Dir(found[0]), nil
}

// SavedWorkflow is a saved workflow script as ListWorkflows finds it.
type SavedWorkflow struct {
	Name        string
	Path        string
	Description string
	Err         string // why it does not load; empty when it does
}

// ListWorkflows lists the saved workflows a session with cfg would find
// (.claude/workflows and .cohort/workflows below its directory, the
// project root and the home directory), with why any fails to load. It
// asks the cohort-workflow program, which loads them.
func ListWorkflows(ctx context.Context, cfg Config) ([]SavedWorkflow, error) {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return nil, err
	}
	roots := []string{b.cwd}
	if b.projectRoot != b.cwd {
		roots = append(roots, b.projectRoot)
	}
	if b.env.Home != "" {
		roots = append(roots, b.env.Home)
	}
	saved, err := host.List(ctx, workflowHost(cfg), roots...)
	if err != nil {
		return nil, err
	}
	out := make([]SavedWorkflow, 0, len(saved))
	for _, sv := range saved {
		w := SavedWorkflow{Name: sv.Name, Path: sv.Path, Err: sv.Error}
		if sv.Meta != nil {
			w.Description = sv.Meta.Description
		}
		out = append(out, w)
	}
	return out, nil
}

// workflowHost is where the cohort-workflow program is: Config's, else
// $COHORT_WORKFLOW_HOST, else found by host.Find.
func workflowHost(cfg Config) host.Config {
	if cfg.WorkflowHost != "" {
		return host.Config{Path: cfg.WorkflowHost}
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return host.Config{Path: getenv(WorkflowHostEnv)}
}
