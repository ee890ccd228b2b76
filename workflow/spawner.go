package workflow

import "github.com/cohort-dev/cohort/workflow/host"

// The types that cross into Cohort's process are defined in package host
// (which does not import goja, so cmd/cohort can link it) and named here.
type (
	// Spawner starts one subagent for an agent() call and waits for its
	// final answer. The host process implements it by asking Cohort, which
	// spawns the agent on the one path every background agent takes, so
	// the sandbox, permissions, hooks, worktree isolation and cost
	// accounting apply to workflow agents unchanged. Spawn is called from
	// many goroutines at once (at most Config.Concurrency at a time) and
	// must be safe for concurrent use. It returns when the agent has
	// finished or ctx is done.
	Spawner = host.Spawner
	// AgentRequest is one agent() call's inputs.
	AgentRequest = host.AgentRequest
	// AgentResult is a finished subagent: its final text and what it cost.
	AgentResult = host.AgentResult
	// Event is something a run reports while it goes.
	Event = host.Event
	// Result is a finished run, with its cost per phase.
	Result = host.Result
	// PhaseCost is one phase's agents and their cost.
	PhaseCost = host.PhaseCost
	// Meta is a script's `export const meta` literal.
	Meta = host.Meta
	// Phase is one entry of meta.phases.
	Phase = host.Phase
)
