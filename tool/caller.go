package tool

import "github.com/cohort-dev/cohort/permission"

// Kind says how an agent came to be, for displays and reports.
type Kind string

// The agent kinds of the spec (sections 1 and 2).
const (
	KindLead       Kind = "lead"
	KindSubagent   Kind = "subagent"   // synchronous: its caller waits
	KindBackground Kind = "background" // run_in_background or a background definition
	KindFork       Kind = "fork"       // a copy of its parent's context
	KindTeammate   Kind = "teammate"   // a named member of a team
	KindDream      Kind = "dream"      // memory consolidation (package dream)
)

// Caller is the one record of an agent's facts: who it is, where it works
// and what it may do. The runtime keeps each agent's record and hands a
// snapshot to every tool call (Env.Caller); task specs, hook inputs and
// team members are made from it in one place each rather than copied by
// hand.
type Caller struct {
	// ID is the agent id ("a" and 16 hex digits, or name@team for a
	// teammate).
	ID string
	// Name makes the agent addressable with SendMessage; Team is the team
	// it is a member of ("alice" and "t1" for alice@t1). A lead that
	// creates a team keeps both empty: the team layer knows what it leads.
	Name string
	Team string
	Kind Kind
	// Type is the definition it runs ("general-purpose", "Explore"),
	// "fork" for a fork, empty for a lead without one.
	Type string
	// Model is the model id it runs on.
	Model string
	// Cwd is its working directory now (a worktree's, once isolated or
	// after EnterWorktree); relative paths resolve against it. The
	// process cwd never changes.
	Cwd string
	// Worktree is the worktree it is confined to, if any.
	Worktree string
	// Mode is its permission mode now.
	Mode permission.Mode
	// Color is a teammate's color in the team's palette.
	Color string
	// Depth is 0 for the lead and parent+1 for each nested agent.
	Depth int
	// ParentID is the agent that spawned it; ParentToolUseID the Agent
	// call that did (every event of the agent carries it).
	ParentID        string
	ParentToolUseID string
}
