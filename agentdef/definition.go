package agentdef

import (
	"fmt"
	"slices"

	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/permission"
)

// Level is where a definition comes from. A higher level overrides a lower
// one with the same name.
type Level int

const (
	LevelBuiltIn Level = iota
	LevelUser
	LevelProject
	LevelCLI
)

func (l Level) String() string {
	switch l {
	case LevelBuiltIn:
		return "built-in"
	case LevelUser:
		return "user"
	case LevelProject:
		return "project"
	case LevelCLI:
		return "cli"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Source says where a definition was read.
type Source struct {
	Level Level
	// Path is the Markdown file, "--agents" for a CLI definition and empty
	// for a built-in.
	Path string
	// Claude is set for files from a .claude/agents directory (read for
	// compatibility). Within a level they lose to .cohort ones.
	Claude bool
}

func (s Source) String() string {
	if s.Path == "" {
		return s.Level.String()
	}
	return s.Level.String() + " " + s.Path
}

// rank orders sources by precedence: higher wins.
func (s Source) rank() int {
	r := int(s.Level) * 2
	if !s.Claude {
		r++
	}
	return r
}

var (
	// permissionModes a definition may ask for: permission.Modes,
	// so the internal "bubble" mode of forks is not selectable.
	permissionModes = modeNames()
	isolations      = []string{"worktree", "remote"}
	memoryScopes    = []string{"user", "project", "local"}
	efforts         = []string{"low", "medium", "high", "xhigh", "max"}
	// Colors is the palette a definition's color comes from (Claude Code's).
	Colors = []string{"red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"}
)

// NamePattern is the form of an agent type's name. It is Claude Code's
// rule, which also accepts dots after the first character: published agents
// are named after versions (dotnet-framework-4.8-expert). Teammate names
// keep the stricter team.NamePattern, since they become file names.
var NamePattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Definition is one agent type: the frontmatter of its Markdown file (field
// names as Claude Code's) and its body as the system prompt. A Definition
// handed out by a Catalog is shared: treat it, and its slices and maps, as
// read-only.
type Definition struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Tools is the allow-list of tool names: nil when absent (all tools),
	// empty when the file says so explicitly (tools: []). "*" means all.
	// Agent(x, y) entries appear here as "Agent"; their argument is in
	// AgentTypes. Unknown names were dropped with a warning at load.
	Tools []string `json:"tools,omitempty"`
	// AgentTypes restricts which agent types this agent may spawn, from
	// Agent(x, y) in tools; nil means any.
	AgentTypes []string `json:"agentTypes,omitempty"`
	// DisallowedTools are removed from the pool after Tools is applied.
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	// Model is an id, an alias (opus|sonnet|haiku) or "inherit"; empty
	// means inherit. See ResolveModel.
	Model string `json:"model,omitempty"`
	// PermissionMode, when set, is the mode the agent runs in (subject to
	// ResolveMode); empty inherits the parent's.
	PermissionMode permission.Mode `json:"permissionMode,omitempty"`
	// MaxTurns caps the agent's query loop; 0 means the engine's default.
	MaxTurns int `json:"maxTurns,omitempty"`
	// MaxBudgetUSD and MaxTokens cap what the agent spends, in US dollars
	// and in tokens (input, cache reads and writes, and output), over its
	// life and the agents it starts (package budget); 0 means no cap of
	// its own (the session's and its team's still apply).
	MaxBudgetUSD float64 `json:"maxBudgetUsd,omitempty"`
	MaxTokens    int64   `json:"maxTokens,omitempty"`
	// Skills are the names of skills preloaded into the agent's first
	// message (package skill); a name the session lacks is a warning when
	// the agent starts.
	Skills []string `json:"skills,omitempty"`
	// MCPServers and Hooks are kept as JSON-compatible values (maps with
	// string keys, slices, strings, numbers, bools) for the MCP and hooks
	// code to interpret.
	MCPServers any `json:"mcpServers,omitempty"`
	Hooks      any `json:"hooks,omitempty"`
	// Memory is user|project|local: the agent gets its own memory dir.
	Memory string `json:"memory,omitempty"`
	// Background makes every spawn of this agent asynchronous.
	Background bool `json:"background,omitempty"`
	// Effort is low|medium|high|xhigh|max; the engine copies it into
	// llm.Request.Effort (see EffortFor).
	Effort string `json:"effort,omitempty"`
	// Isolation is worktree|remote.
	Isolation string `json:"isolation,omitempty"`
	// Color is one of Colors; it tints the agent's output in UIs.
	Color string `json:"color,omitempty"`
	// InitialPrompt is the first user turn when the definition runs as the
	// main agent (cohort --agent NAME) and no prompt was given.
	InitialPrompt string `json:"initialPrompt,omitempty"`

	// Prompt is the system prompt: the Markdown body, trimmed.
	Prompt string `json:"prompt"`
	// Source says where the definition was read.
	Source Source `json:"-"`
	// BuiltIn marks Cohort's own definitions. Only custom definitions lose
	// TeamCreate and TeamDelete (the custom-agent layer of Pool).
	BuiltIn bool `json:"-"`
	// ReadOnly marks built-ins that change no files (Explore, Plan,
	// verification); slim_subagent_memory spares them memory files.
	ReadOnly bool `json:"-"`
	// Flag names the feature flag that gates a built-in; empty = always on.
	Flag string `json:"-"`
}

// CanSpawn reports whether this agent may start an agent of type agentType:
// true unless Agent(x, y) in its tools names other types. Whether it has the
// Agent tool at all is the pool's business.
func (d *Definition) CanSpawn(agentType string) bool {
	return d.AgentTypes == nil || slices.Contains(d.AgentTypes, agentType)
}

// ListsAgent reports whether the definition names the Agent tool in its
// tools (bare or as Agent(type, …)): the one way a subagent gets to start
// agents. A nil definition, an absent tools list and "*" do not.
func (d *Definition) ListsAgent() bool {
	return d != nil && d.Tools != nil && slices.Contains(d.Tools, "Agent")
}

// EffortFor returns the effort level to put in llm.Request.Effort for this
// agent: its own when set, else the parent's (empty leaves the provider's
// default).
func (d *Definition) EffortFor(parent string) string {
	if d.Effort != "" {
		return d.Effort
	}
	return parent
}

// ResolveMode returns the permission mode an agent runs in, given its
// parent's: the definition's mode if set, else the parent's; a
// parent in bypassPermissions or acceptEdits wins over the definition. A
// read-only built-in that asks for plan mode always gets it, whatever the
// parent runs in: its Bash is read-only only because plan mode refuses
// anything else.
func ResolveMode(parent permission.Mode, d *Definition) permission.Mode {
	if d.BuiltIn && d.ReadOnly && d.PermissionMode == permission.ModePlan {
		return permission.ModePlan
	}
	if parent == permission.ModeBypassPermissions || parent == permission.ModeAcceptEdits || d.PermissionMode == "" {
		return parent
	}
	return d.PermissionMode
}

func modeNames() []string {
	names := make([]string, len(permission.Modes))
	for i, m := range permission.Modes {
		names[i] = string(m)
	}
	return names
}
