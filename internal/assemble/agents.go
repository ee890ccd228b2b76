package assemble

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/workflowrun"
)

// Agent states, the values of package cohort's Agent* constants.
const (
	stateRunning   = "running"
	stateIdle      = "idle"
	stateStarting  = "starting"
	stateCompleted = "completed"
	stateFailed    = "failed"
	stateKilled    = "killed"
	stateDead      = "dead"
)

// AgentRecord is a snapshot of one agent of the session (package cohort's
// AgentInfo is made from it): its record (for a teammate in a process of
// its own, what its team record says), state, task, usage and, for the
// node of a workflow run (Kind "workflow"), the run.
type AgentRecord struct {
	tool.Caller
	State       string
	Description string
	TaskID      string
	InProcess   bool
	InMemory    bool
	Usage       llm.Usage
	CostUSD     float64
	// CapUSD is its own dollar cap (the lead's: the session's).
	CapUSD     float64
	ToolUses   int
	Activities []task.Activity
	Started    time.Time
	Ended      time.Time
	Workflow   *workflowrun.Detail

	workflowRun string // the run a step belongs to
}

// Snapshot is every agent of the session, in the order they started, and
// what the retired agents add up to, taken together so that each agent is
// counted once. running says whether the session's own agent is at work.
func (s *Session) Snapshot(running bool) ([]AgentRecord, crew.RetiredTotals) {
	var (
		out     []AgentRecord
		retired crew.RetiredTotals
	)
	seen := map[string]bool{}
	if s.rt != nil {
		var agents []*crew.Agent
		agents, retired = s.rt.Snapshot()
		for _, a := range agents {
			info := s.agentRecord(a, running)
			seen[info.ID] = true
			out = append(out, info)
		}
	}
	if s.team != nil && s.mate == nil {
		for _, m := range s.team.Members() {
			if seen[m.AgentID] {
				for i := range out {
					if out[i].ID == m.AgentID && out[i].State != stateKilled {
						out[i].State = memberState(m.State, out[i].State)
					}
				}
				continue
			}
			seen[m.AgentID] = true
			out = append(out, AgentRecord{Caller: memberCaller(m.AgentID, m.Name, m.Team, m.AgentType, m.Model, m.Cwd, m.WorktreePath, m.Mode, m.Color),
				State: memberState(m.State, stateStarting), Started: m.JoinedAt})
		}
		out = s.addProcessMembers(out, seen)
	}
	return s.withWorkflows(out), retired
}

// KindRetired is the kind of the one record that stands for the agents
// that have left memory (crew's retired agents): Agents sums them there,
// so that every total made from AgentList keeps their spend.
const KindRetired tool.Kind = "retired"

// AgentList is Snapshot with the retired agents as one record at the end
// (ID "retired", Kind KindRetired, Name "N finished agents", state
// completed, their summed usage and cost), when there are any.
func (s *Session) AgentList(running bool) []AgentRecord {
	recs, r := s.Snapshot(running)
	if r.Agents == 0 {
		return recs
	}
	return append(recs, AgentRecord{Caller: tool.Caller{ID: "retired", Kind: KindRetired, Name: retiredName(r.Agents), Depth: 1},
		State: stateCompleted, Usage: r.Usage, CostUSD: r.CostUSD})
}

// retiredName says how many agents the retired record stands for.
func retiredName(n int) string {
	if n == 1 {
		return "1 finished agent"
	}
	return fmt.Sprintf("%d finished agents", n)
}

// memberCaller is a teammate's record as its team record gives it.
func memberCaller(id, name, team, typ, model, cwd, worktree, mode, color string) tool.Caller {
	return tool.Caller{ID: id, Name: name, Team: team, Kind: tool.KindTeammate, Type: typ, Model: model,
		Cwd: cwd, Worktree: worktree, Mode: permission.Mode(mode), Color: color, Depth: 1}
}

func (s *Session) agentRecord(a *crew.Agent, running bool) AgentRecord {
	info := AgentRecord{Caller: a.Info(), InProcess: true}
	info.Usage, info.CostUSD = a.Usage()
	info.CapUSD = a.Caps().USD
	info.InMemory = a.Engine() != nil
	if r := a.Result(); r != nil {
		info.ToolUses = r.ToolUses
	}
	switch t := a.Task(); {
	case a == s.MainAgent():
		// The lead runs while a turn of its own is under way, not while
		// the Run waits for its agents; its time stops when its turn ends.
		// (A teammate's session runs its own agent for the whole Run.)
		info.State, info.Started = stateIdle, s.usage.opened
		info.ToolUses = max(info.ToolUses, s.usage.ownToolUses())
		busy, ended := s.usage.leadState()
		if running && (busy || s.mate != nil) {
			info.State = stateRunning
		} else {
			info.Ended = cmp.Or(ended, s.usage.opened)
		}
	case t != nil:
		st := t.State()
		info.TaskID, info.Description = st.ID, st.Description
		info.Started, info.Ended = st.StartTime, st.EndTime
		info.ToolUses = max(info.ToolUses, st.Progress.ToolUses)
		info.Activities = append(info.Activities, st.Progress.Activities...)
		info.State = taskState(st.Status)
		if p, ok := s.rt.Tasks().Get(st.ParentID); ok && p.Kind() == task.KindWorkflow {
			info.workflowRun = st.ParentID
		}
		if s.rt.Running(a) {
			info.State = stateRunning
		}
	case s.rt.Running(a):
		info.State = stateRunning
	default:
		info.State = stateCompleted
	}
	return info
}

func taskState(st task.Status) string {
	switch st {
	case task.StatusCompleted:
		return stateCompleted
	case task.StatusFailed:
		return stateFailed
	case task.StatusKilled:
		return stateKilled
	}
	return stateRunning
}

// memberState maps a teammate's published state onto the agent states.
func memberState(st teammate.State, otherwise string) string {
	switch st {
	case teammate.StateStarting:
		return stateStarting
	case teammate.StateBusy:
		return stateRunning
	case teammate.StateIdle:
		return stateIdle
	case teammate.StateStopped:
		return stateCompleted
	case teammate.StateDead:
		return stateDead
	}
	return otherwise
}

// addProcessMembers fills in what the teammates in processes of their own
// published (usage, cost, start and end) and adds those no longer in the
// team (shut down, or their team deleted), which the session still paid
// for.
func (s *Session) addProcessMembers(out []AgentRecord, seen map[string]bool) []AgentRecord {
	for _, pm := range s.team.ProcessMembers() {
		usage, cost := pm.Spend.Total()
		pm.Model = cmp.Or(mainModel(pm.Spend), pm.Model)
		if seen[pm.AgentID] {
			for i := range out {
				if out[i].ID == pm.AgentID && !out[i].InProcess {
					out[i].Usage, out[i].CostUSD = usage, cost
					out[i].Started, out[i].Ended = pm.Started, pm.Ended
					out[i].Model = cmp.Or(pm.Model, out[i].Model)
				}
			}
			continue
		}
		seen[pm.AgentID] = true
		out = append(out, AgentRecord{Caller: memberCaller(pm.AgentID, pm.Name, pm.Team, pm.AgentType, pm.Model, pm.Cwd, pm.WorktreePath, pm.Mode, pm.Color),
			State: memberState(pm.State, stateCompleted), Usage: usage, CostUSD: cost, Started: pm.Started, Ended: pm.Ended})
	}
	return out
}

// mainModel is the model that served most of a spend's tokens (what a
// teammate that inherits its model ran on); "" for none.
func mainModel(sp teammate.Spend) string {
	best, most := "", int64(-1)
	for _, model := range slices.Sorted(maps.Keys(sp)) {
		if n := sp[model].Total(); n > most {
			best, most = model, n
		}
	}
	return best
}

// withWorkflows adds a node for each workflow run of the session, just
// before its first agent, and points its agents at it.
func (s *Session) withWorkflows(out []AgentRecord) []AgentRecord {
	if s.rt == nil {
		return out
	}
	var runs []AgentRecord
	for _, st := range s.rt.Tasks().List() {
		d, ok := st.Detail.(*workflowrun.Detail)
		if st.Kind != task.KindWorkflow || !ok {
			continue
		}
		info := AgentRecord{Caller: tool.Caller{ID: st.ID, Name: d.RunID, Kind: "workflow", Type: d.Name}, State: taskState(st.Status),
			Description: d.Description, TaskID: st.ID, InProcess: true, CostUSD: d.CostUSD, ToolUses: d.Started,
			Started: st.StartTime, Ended: st.EndTime, Workflow: d}
		if a, ok := s.rt.Lookup(st.ParentID); ok {
			info.ParentID = a.ID()
		} else if p, ok := s.rt.Tasks().Get(st.ParentID); ok {
			info.ParentID = p.State().AgentID
		}
		info.Activities = append(info.Activities, st.Progress.Activities...)
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

// UsageLine is one agent's line in a result's per-agent list (package
// cohort's AgentUsage, field for field): what it is, what it spent, the
// share of its input read from the prompt cache, how long it has run.
type UsageLine struct {
	ID, Name, Kind, Type, Model string
	Usage                       llm.Usage
	CostUSD                     float64
	CacheReadRatio              float64
	DurationMs                  int64
}

// Usage is the per-agent list at now, in the order of Snapshot: every
// agent but a workflow run's node (its agents have their lines), and the
// retired agents summed in one line of kind "retired".
func (s *Session) Usage(running bool, now time.Time) []UsageLine {
	recs, r := s.Snapshot(running)
	out := make([]UsageLine, 0, len(recs)+1)
	for _, a := range recs {
		if a.Workflow != nil {
			continue
		}
		u := UsageLine{ID: a.ID, Name: a.Name, Kind: string(a.Kind), Type: a.Type, Model: a.Model,
			Usage: a.Usage, CostUSD: a.CostUSD, CacheReadRatio: cacheReadRatio(a.Usage)}
		if !a.Started.IsZero() {
			end := a.Ended
			if end.IsZero() {
				end = now
			}
			u.DurationMs = end.Sub(a.Started).Milliseconds()
		}
		out = append(out, u)
	}
	if r.Agents > 0 {
		out = append(out, UsageLine{ID: "retired", Kind: string(KindRetired), Name: retiredName(r.Agents), Usage: r.Usage, CostUSD: r.CostUSD,
			CacheReadRatio: cacheReadRatio(r.Usage)})
	}
	return out
}

// cacheReadRatio is the share of u's input tokens read from the cache.
func cacheReadRatio(u llm.Usage) float64 {
	if in := u.TotalInput(); in > 0 {
		return float64(u.CacheReadInputTokens) / float64(in)
	}
	return 0
}
