package cohort

import (
	"time"

	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/workflow/host"
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
	// Kind is lead, subagent, background, fork, teammate, workflow or
	// retired (see Agents); Type the agent definition it runs.
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

	// Usage and CostUSD are its lifetime totals, CapUSD its cap (the lead's is the session's, over all).
	Usage           llm.Usage
	CostUSD, CapUSD float64
	ToolUses        int
	// Activities are its last tool calls (at most five), oldest first.
	Activities []Activity
	Started    time.Time
	Ended      time.Time // zero while it runs

	// Workflow is set on the node of a workflow run (Kind "workflow"): its
	// phases and agents. An agent that is a step of a run has the run's id
	// as its ParentID.
	Workflow *WorkflowInfo
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
// placed before its first agent, and its agents' ParentID is the run. An
// agent left running by a Run that was broken out of is here. A finished
// subagent or background agent leaves the list once its conversation has
// been evicted (Config.EvictAfter after its end), so a session that runs
// thousands of agents keeps flat memory: its record moves to an index
// beside its transcript, and a message still resumes it. One last entry
// (ID and Kind "retired", Name "N finished agents") sums such agents, so
// the costs of Agents add up to the result's total_cost_usd.
func (s *Session) Agents() []AgentInfo {
	return agentInfos(s.parts.AgentList(s.ctl.isRunning()))
}

func agentInfos(recs []assemble.AgentRecord) []AgentInfo {
	out := make([]AgentInfo, len(recs))
	for i, r := range recs {
		a := AgentInfo{ID: r.ID, Name: r.Name, Team: r.Team, Kind: string(r.Kind), Type: r.Type, Model: r.Model,
			State: r.State, Description: r.Description, TaskID: r.TaskID, InProcess: r.InProcess, InMemory: r.InMemory,
			Cwd: r.Cwd, Worktree: r.Worktree, PermissionMode: string(r.Mode), Color: r.Color, Depth: r.Depth,
			ParentID: r.ParentID, ParentToolUseID: r.ParentToolUseID, Usage: r.Usage, CostUSD: r.CostUSD, CapUSD: r.CapUSD,
			ToolUses: r.ToolUses, Started: r.Started, Ended: r.Ended}
		for _, act := range r.Activities {
			a.Activities = append(a.Activities, Activity(act))
		}
		if d := r.Workflow; d != nil {
			a.Workflow = &WorkflowInfo{RunID: d.RunID, Script: d.Script, Estimate: d.Estimate, Phases: d.Phases,
				Phase: d.Phase, Started: d.Started, Running: d.Running, Finished: d.Finished, Replayed: d.Replayed}
			if d.Result != nil {
				a.Workflow.Value, a.Workflow.PhaseCosts = d.Result.Value, d.Result.Phases
			}
		}
		out[i] = a
	}
	return out
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

// AgentUsage is one agent's line in the per-agent list of a result event
// (`agents` in the JSON result): what the agent is, what it spent and how
// long it ran. Every agent of the session has one — the lead, subagents,
// background agents, forks, teammates in this process or in their own —
// and their costs add up to the result's total_cost_usd (a workflow run is
// not an agent: its agents are listed, not its node). Agents that have
// left memory (a long session's finished ones, see Agents) are summed in
// one line of kind "retired" whose ID is "retired" and Name says how many.
type AgentUsage struct {
	ID    string    `json:"id"`
	Name  string    `json:"name,omitempty"`
	Kind  string    `json:"kind"`
	Type  string    `json:"type,omitempty"`
	Model string    `json:"model,omitempty"`
	Usage llm.Usage `json:"usage"`
	// CostUSD is its lifetime cost.
	CostUSD float64 `json:"cost_usd"`
	// CacheReadRatio is the share of its input tokens read from the
	// prompt cache (0 when it sent none).
	CacheReadRatio float64 `json:"cache_read_ratio"`
	// DurationMs is how long it has run: from its start to its end, or to
	// now while it runs.
	DurationMs int64 `json:"duration_ms"`
}

// agentUsage is the per-agent list at now, in the order of Agents.
func (s *Session) agentUsage(now time.Time) []AgentUsage {
	lines := s.parts.Usage(s.ctl.isRunning(), now)
	out := make([]AgentUsage, len(lines))
	for i, l := range lines {
		out[i] = AgentUsage(l)
	}
	return out
}

// modelUsage is a result's per-model lines.
func modelUsage(sp teammate.Spend) map[string]*ModelUsage {
	out := make(map[string]*ModelUsage, len(sp))
	for model, m := range sp {
		out[model] = &ModelUsage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
			CacheReadInputTokens: m.CacheReadInputTokens, CacheCreationInputTokens: m.CacheCreationInputTokens,
			CostUSD: m.CostUSD}
	}
	return out
}
