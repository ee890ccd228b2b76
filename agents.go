package cohort

import (
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/teammate"
)

// Agent states, as Agents reports them.
const (
	AgentRunning   = "running"   // working on something
	AgentIdle      = "idle"      // waiting for input (the lead between Runs, a teammate between messages)
	AgentStarting  = "starting"  // a teammate that has not reported yet
	AgentCompleted = "completed" // finished; a message resumes it
	AgentFailed    = "failed"
	AgentKilled    = "killed" // stopped (StopAgent, TaskStop, Close)
	AgentDead      = "dead"   // a teammate process gone without shutting down
)

// AgentInfo is a snapshot of one agent of the session.
type AgentInfo struct {
	// ID is the agent id (name@team for a teammate); Name its address for
	// Message and SendMessage, if it has one.
	ID   string
	Name string
	Team string
	// Kind is lead, subagent, background, fork or teammate; Type the agent
	// definition it runs.
	Kind  string
	Type  string
	Model string
	// State is one of the Agent* constants.
	State string
	// Description is what it was asked to do (the Agent call's).
	Description string
	// TaskID is the task it runs as (empty for the lead).
	TaskID string
	// InProcess is false for a teammate in a process of its own (tmux):
	// only its team record and state are known here.
	InProcess bool
	// InMemory is whether its conversation is held in memory; a finished
	// agent's leaves after Config.EvictAfter (a message brings it back
	// from its transcript).
	InMemory bool

	Cwd, Worktree   string
	PermissionMode  string
	Color           string
	Depth           int
	ParentID        string
	ParentToolUseID string

	// Usage and CostUSD are its lifetime totals; ToolUses its tool calls.
	Usage    llm.Usage
	CostUSD  float64
	ToolUses int
	// Activities are its last tool calls (at most five), oldest first.
	Activities []Activity
	Started    time.Time
	Ended      time.Time // zero while it runs

	// Workflow is set on the node of a workflow run (Kind "workflow"): its
	// phases and agents. An agent that is a step of a run has the run's id
	// as its ParentID.
	Workflow *WorkflowInfo

	workflowRun string // the run a step belongs to
}

// Activity is one tool call an agent made.
type Activity struct {
	Tool        string
	Description string
	Time        time.Time
}

// Agents returns a snapshot of every agent of the session, running or
// finished, in the order they started: the lead first, then subagents,
// background agents, forks and teammates (those in their own processes
// too). A workflow run is one node (Kind "workflow", its ID the run id)
// placed before its first agent, and its agents' ParentID is the run. An agent left running by a Run that was broken out of is here.
// A finished subagent or background agent leaves the list once its
// conversation has been evicted (Config.EvictAfter after its end), so a
// session that runs thousands of agents keeps flat memory: its record
// moves to an index beside its transcript, a message still resumes it,
// and the result event's per-agent list sums such agents in one line.
func (s *Session) Agents() []AgentInfo {
	out, _ := s.agentsAndRetired()
	return out
}

// agentsAndRetired is Agents and what the retired agents add up to, taken
// together so that each agent is counted once.
func (s *Session) agentsAndRetired() ([]AgentInfo, crew.RetiredTotals) {
	var (
		out     []AgentInfo
		retired crew.RetiredTotals
	)
	seen := map[string]bool{}
	if s.rt != nil {
		var agents []*crew.Agent
		agents, retired = s.rt.Snapshot()
		for _, a := range agents {
			info := s.agentInfo(a)
			seen[info.ID] = true
			out = append(out, info)
		}
	}
	if s.team != nil && s.mate == nil {
		for _, m := range s.team.Members() {
			if seen[m.AgentID] {
				for i := range out {
					if out[i].ID == m.AgentID && out[i].State != AgentKilled {
						out[i].State = memberState(m.State, out[i].State)
					}
				}
				continue
			}
			seen[m.AgentID] = true
			out = append(out, AgentInfo{ID: m.AgentID, Name: m.Name, Team: m.Team, Kind: "teammate",
				Type: m.AgentType, Model: m.Model, State: memberState(m.State, AgentStarting),
				Cwd: m.Cwd, Worktree: m.WorktreePath, PermissionMode: m.Mode, Color: m.Color, Depth: 1,
				Started: m.JoinedAt})
		}
		out = s.addProcessMembers(out, seen)
	}
	return s.withWorkflows(out), retired
}

func (s *Session) agentInfo(a *crew.Agent) AgentInfo {
	rec := a.Info()
	info := AgentInfo{ID: rec.ID, Name: rec.Name, Team: rec.Team, Kind: string(rec.Kind), Type: rec.Type,
		Model: rec.Model, Cwd: rec.Cwd, Worktree: rec.Worktree, PermissionMode: string(rec.Mode),
		Color: rec.Color, Depth: rec.Depth, ParentID: rec.ParentID, ParentToolUseID: rec.ParentToolUseID,
		InProcess: true}
	info.Usage, info.CostUSD = a.Usage()
	info.InMemory = a.Engine() != nil
	if r := a.Result(); r != nil {
		info.ToolUses = r.ToolUses
	}
	switch t := a.Task(); {
	case a == s.mainAgent():
		info.State, info.Started = AgentIdle, s.usage.opened
		if s.ctl.isRunning() {
			info.State = AgentRunning
		}
	case t != nil:
		st := t.State()
		info.TaskID, info.Description = st.ID, st.Description
		info.Started, info.Ended = st.StartTime, st.EndTime
		info.ToolUses = max(info.ToolUses, st.Progress.ToolUses)
		for _, act := range st.Progress.Activities {
			info.Activities = append(info.Activities, Activity(act))
		}
		info.State = taskState(st.Status)
		if p, ok := s.rt.Tasks().Get(st.ParentID); ok && p.Kind() == task.KindWorkflow {
			info.workflowRun = st.ParentID
		}
		if s.rt.Running(a) {
			info.State = AgentRunning
		}
	case s.rt.Running(a):
		info.State = AgentRunning
	default:
		info.State = AgentCompleted
	}
	return info
}

func taskState(st task.Status) string {
	switch st {
	case task.StatusCompleted:
		return AgentCompleted
	case task.StatusFailed:
		return AgentFailed
	case task.StatusKilled:
		return AgentKilled
	}
	return AgentRunning
}

// memberState maps a teammate's published state onto the Agent* ones.
func memberState(st teammate.State, otherwise string) string {
	switch st {
	case teammate.StateStarting:
		return AgentStarting
	case teammate.StateBusy:
		return AgentRunning
	case teammate.StateIdle:
		return AgentIdle
	case teammate.StateStopped:
		return AgentCompleted
	case teammate.StateDead:
		return AgentDead
	}
	return otherwise
}
