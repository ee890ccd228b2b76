package cohort

import (
	"path/filepath"
	"slices"

	"github.com/cohort-dev/cohort/runtime"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/workflow/host"
	"github.com/cohort-dev/cohort/workflowtool"
)

// workflowConfig wires workflows into the session: runs are kept in the
// session's directory, saved workflows found below the cwd, the project
// root and the home directory.
func (s *Session) workflowConfig(rt *runtime.Runtime) workflowtool.Config {
	roots := []string{s.cwd}
	if s.projectRoot != s.cwd {
		roots = append(roots, s.projectRoot)
	}
	if s.env.Home != "" {
		roots = append(roots, s.env.Home)
	}
	return workflowtool.Config{Runtime: rt, Host: host.Config{Path: s.cfg.WorkflowHost},
		Dir: filepath.Join(s.projectDir, s.id, "workflows"), Roots: roots}
}

// WorkflowInfo is a workflow run as Agents shows it: the node of kind
// "workflow" whose ID is the run id; its agents' ParentID is that id.
type WorkflowInfo struct {
	RunID  string
	Script string   // the run's copy of the script
	Phases []string // meta.phases' titles
	Phase  string   // the phase the script is in now
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
		d, ok := st.Detail.(*workflowtool.Detail)
		if st.Kind != task.KindWorkflow || !ok {
			continue
		}
		w := &WorkflowInfo{RunID: d.RunID, Script: d.Script, Phases: d.Phases, Phase: d.Phase,
			Started: d.Started, Running: d.Running, Finished: d.Finished, Replayed: d.Replayed}
		if d.Result != nil {
			w.Value, w.PhaseCosts = d.Result.Value, d.Result.Phases
		}
		info := AgentInfo{ID: st.ID, Name: d.Name, Kind: "workflow", Type: d.Name, State: taskState(st.Status),
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
