package flags

// Names of every flag. Code that gates a path on a flag uses these constants
// so a typo is a compile error rather than a run-time panic.
const (
	ForkSubagent             = "fork_subagent"
	BuiltinExplorePlanAgents = "builtin_explore_plan_agents"
	VerificationAgent        = "verification_agent"
	CoordinatorMode          = "coordinator_mode"
	AgentCwd                 = "agent_cwd"
	AutoBackgroundAgents     = "auto_background_agents"
	AutoBackgroundAfterS     = "auto_background_after_s"
	SlimSubagentMemory       = "slim_subagent_memory"
	AgentListAttachment      = "agent_list_attachment"
	AgentTeams               = "agent_teams"
	AutoDream                = "auto_dream"
	AutoDreamMinHours        = "auto_dream_min_hours"
	AutoDreamMinSessions     = "auto_dream_min_sessions"
	RemoteAgents             = "remote_agents"
	Workflows                = "workflows"
	SiblingGate              = "sibling_gate"
	BackgroundAgents         = "background_agents"
	ImplicitTeam             = "implicit_team"
)

// Kind is the type of a flag's value.
type Kind int

const (
	// KindBool flags are on or off: 1|true|on, 0|false|off.
	KindBool Kind = iota
	// KindInt flags are non-negative whole numbers written as digits.
	KindInt
)

func (k Kind) String() string {
	if k == KindInt {
		return "int"
	}
	return "bool"
}

// Def describes one registered flag.
type Def struct {
	Name string
	Kind Kind
	// Default is the value when no source sets the flag: 0 or 1 for a bool
	// flag, the number for an int flag.
	Default int
	// Description says in one line what the flag gates.
	Description string
}

// DefaultValue renders the default the way a user would write it.
func (d Def) DefaultValue() string { return format(d.Kind, d.Default) }

// registry lists every flag in the order `cohort flags` prints them: the
// order of doc/ARCHITECTURE.md's table of flags, with each number next to
// the switch it tunes.
var registry = []Def{
	{ForkSubagent, KindBool, 0, "an Agent call without subagent_type forks the caller (shares its context and prompt cache)"},
	{BuiltinExplorePlanAgents, KindBool, 1, "provide the built-in read-only Explore and Plan agents"},
	{VerificationAgent, KindBool, 0, "provide the built-in read-only background verification agent (verdict PASS/FAIL/PARTIAL)"},
	{CoordinatorMode, KindBool, 0, "the lead only orchestrates: its tools shrink to Agent, SendMessage, TaskStop, TaskOutput"},
	{AgentCwd, KindBool, 0, "the Agent tool accepts a cwd parameter"},
	{AutoBackgroundAgents, KindBool, 0, "a synchronous subagent moves to the background after auto_background_after_s"},
	{AutoBackgroundAfterS, KindInt, 120, "seconds before a synchronous subagent is moved to the background"},
	{SlimSubagentMemory, KindBool, 1, "read-only built-in agents get no memory files or git status"},
	{AgentListAttachment, KindBool, 0, "list agent types in the first user message instead of the Agent tool description"},
	{AgentTeams, KindBool, 1, "teams and teammates: TeamCreate, TeamDelete, SendMessage"},
	{AutoDream, KindBool, 1, "background memory consolidation (DreamTask) after lead turns"},
	{AutoDreamMinHours, KindInt, 24, "hours since the last consolidation before DreamTask runs again"},
	{AutoDreamMinSessions, KindInt, 5, "sessions touched since the last consolidation before DreamTask runs"},
	{RemoteAgents, KindBool, 0, "isolation: remote runs agents on NATS workers"},
	{Workflows, KindBool, 1, "the agents have the Workflow tool, which runs workflow scripts, wherever the cohort-workflow program is found"},
	{SiblingGate, KindBool, 1, "agents one message starts with a shared prompt prefix wait for the first one's first token, to read its cache entry"},
	{BackgroundAgents, KindBool, 0, "Claude Code 2.1.332's agent model: an Agent call runs in the background unless run_in_background is false"},
	{ImplicitTeam, KindBool, 0, "Claude Code 2.1.332's agent model: one implicit team per session, which an Agent call with a name joins; team_name and mode are ignored; no TeamCreate or TeamDelete"},
}

var index = func() map[string]int {
	m := make(map[string]int, len(registry))
	for i, d := range registry {
		m[d.Name] = i
	}
	return m
}()

// Defs returns every registered flag in display order. The slice is a copy.
func Defs() []Def { return append([]Def(nil), registry...) }

// Lookup returns the definition of the flag called name.
func Lookup(name string) (Def, bool) {
	i, ok := index[name]
	if !ok {
		return Def{}, false
	}
	return registry[i], true
}
