package agentdef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Role is the kind of agent a pool is computed for.
type Role int

const (
	// RoleMain is the lead (depth 0), possibly running a definition
	// (cohort --agent NAME).
	RoleMain Role = iota
	// RoleSubagent is a synchronous subagent.
	RoleSubagent
	// RoleBackground is an asynchronous agent (run_in_background, a
	// definition with background: true, a remote agent).
	RoleBackground
	// RoleTeammate is a named member of a team.
	RoleTeammate
)

func (r Role) String() string {
	return [...]string{"main agent", "subagent", "background agent", "teammate"}[r]
}

// The tool sets of the pool's layers (Pool).
var (
	// allAgentDisallowed never reach an agent other than the lead (Agent is
	// handled by depth instead).
	allAgentDisallowed = set("TaskOutput", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion", "TaskStop", "Workflow")
	// customAgentDisallowed never reach an agent from a non-built-in
	// definition.
	customAgentDisallowed = set("TeamCreate", "TeamDelete")
	// asyncAgentAllowed is all a background agent may have: the spec's
	// list, plus MultiEdit and LS, which do what Edit and Glob (on the list)
	// do, so that a background agent whose file names them keeps them.
	asyncAgentAllowed = set("Read", "Grep", "Glob", "LS", "Bash", "Edit", "MultiEdit", "Write", "NotebookEdit", "TodoWrite",
		"WebFetch", "WebSearch", "Skill", "ToolSearch", "EnterWorktree", "ExitWorktree")
	// teammateExtra are added to the async allow-list for teammates.
	teammateExtra = set("SendMessage", "ListAgents", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "ExitPlanMode")
	// teamWork are the tools of forming and working a team: only the lead
	// and (all but the first two) its teammates have them.
	teamWork = set("TeamCreate", "TeamDelete", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList")
	// delegation are the tools a subagent gets only when its definition
	// lists Agent: starting agents, and messaging the ones it named.
	delegation = set("Agent", "SendMessage", "ListAgents")
	// namedOnly do what another tool does (LS what Glob and ls through
	// Bash do, MultiEdit what Edit does): a subagent or background agent,
	// which pays for its array on every request, has them only when its
	// definition names them. The lead and teammates keep them.
	namedOnly = set("LS", "MultiEdit")
	// onDemand are offered on demand (tool/toolsearch): listed by name and
	// loaded when the model asks. They are the tools the cost workloads'
	// agents never call and typical sessions rarely do — a notebook, a
	// worktree, the web (most coding work never leaves the repository;
	// Claude Code defers both web tools too), listing or stopping agents,
	// reading a task's output (notifications bring it), entering plan
	// mode, forming a team and, for the lead, its task list — and each
	// costs every request of every agent that has it.
	onDemand = set("NotebookEdit", "EnterWorktree", "ExitWorktree", "WebFetch", "WebSearch", "LS", "MultiEdit", "ListAgents",
		"TaskOutput", "TaskStop", "EnterPlanMode", "TeamCreate", "TeamDelete", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList")
	// coordinatorTools are all a lead in coordinator mode keeps.
	coordinatorTools = set("Agent", "SendMessage", "ListAgents", "TaskStop", "TaskOutput")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// PoolInput describes the agent a pool is for.
type PoolInput struct {
	Role Role
	// Def is the agent's definition; nil for a lead without one. For other
	// roles nil counts as a custom definition with no tool lists.
	Def *Definition
	// Depth is the agent's own depth (0 for the lead); it keeps the Agent
	// tool only while Depth < MaxDepth, so MaxDepth 0 means no nesting.
	Depth, MaxDepth int
	// PlanMode keeps only tools ReadOnly approves, plus ExitPlanMode. A
	// teammate is offered ExitPlanMode only in plan mode.
	PlanMode bool
	// Isolated is an agent other than the lead that starts confined to a
	// worktree (isolation "worktree", or a parent's): it cannot leave it,
	// so it is not offered EnterWorktree or ExitWorktree.
	Isolated bool
	// ReadOnly reports whether a tool is safe in plan mode. A tool whose
	// calls vary (Bash) may say yes when the permission pipeline refuses
	// its mutating calls in plan mode. Nil approves nothing.
	ReadOnly func(name string) bool
	// Coordinator is the coordinator_mode flag; it applies to RoleMain only.
	Coordinator bool
	// OwnMCP are the tools of the MCP servers the definition itself
	// declares (mcpServers): its own connections', and those of session
	// servers it names, which move to the end of the pool. They bypass the definition's tools list (the
	// definition asked for them) but not its disallowedTools or plan mode.
	OwnMCP []string
	// MCPOnDemand offers the pool's MCP tools on demand (tool/toolsearch);
	// the function MCPOnDemand decides it from the pool's definitions.
	MCPOnDemand bool
}

// Pool computes an agent's tools from all, the tools available in canonical
// order (MCP tools included), in layers:
//
//	all − ALL_AGENT_DISALLOWED − CUSTOM_AGENT_DISALLOWED ∩ ASYNC_AGENT_ALLOWED
//	    ∩ definition.tools − definition.disallowedTools ∪ MCP tools
//
// The result keeps the order of all (OwnMCP follow, in their order), with
// duplicates dropped, so the same inputs give the same bytes in the cached
// prompt. See the package doc for how MCP tools, teammates, plan mode and the
// lead are handled. The warnings name tools a definition lists explicitly
// that the agent does not get, and why.
func Pool(all []string, in PoolInput) ([]string, []Warning) {
	var out []string
	why := map[string]string{}
	seen := map[string]bool{}
	own := set(in.OwnMCP...)
	for _, name := range all {
		if seen[name] || own[name] {
			continue // the definition's own servers' tools come last
		}
		seen[name] = true
		if reason := in.exclude(name); reason != "" {
			why[name] = reason
			continue
		}
		out = append(out, name)
	}
	for _, name := range in.OwnMCP {
		if seen[name] || !isMCP(name) {
			continue
		}
		seen[name] = true
		if in.Def != nil && matchAny(in.Def.DisallowedTools, name) || !in.planAllows(name) {
			continue
		}
		out = append(out, name)
	}
	return out, in.explain(seen, why)
}

// PoolTools is Pool over tools, matched by their names.
func PoolTools(all []tool.Tool, in PoolInput) ([]tool.Tool, []Warning) {
	names := make([]string, len(all))
	byName := make(map[string]tool.Tool, len(all))
	for i, t := range all {
		names[i] = t.Def().Name
		if _, dup := byName[names[i]]; !dup {
			byName[names[i]] = t
		}
	}
	kept, warns := Pool(names, in)
	out := make([]tool.Tool, len(kept))
	for i, n := range kept {
		out[i] = byName[n]
	}
	return out, warns
}

// exclude returns why name is not in the pool, or "" if it is.
func (in PoolInput) exclude(name string) string {
	if name == "Agent" && in.Depth >= in.MaxDepth {
		return fmt.Sprintf("the nesting limit (depth %d, max %d)", in.Depth, in.MaxDepth)
	}
	switch {
	case in.Role == RoleMain:
		if in.Coordinator && !coordinatorTools[name] {
			return "coordinator mode"
		}
	case isMCP(name):
		// MCP tools pass every type filter.
	case allAgentDisallowed[name] && in.Role == RoleTeammate && name == "ExitPlanMode" && !in.PlanMode:
		return "a teammate has it only when it starts in plan mode"
	case allAgentDisallowed[name] && !(in.Role == RoleTeammate && name == "ExitPlanMode"):
		return "only the lead has it"
	case in.Isolated && in.Role != RoleMain && (name == "EnterWorktree" || name == "ExitWorktree"):
		return "an agent started in a worktree stays in it until it ends"
	case in.subagent() && namedOnly[name] && !in.Def.names(name):
		return "a " + in.Role.String() + " has it only when its definition names it: Glob (or ls through Bash) lists a directory, Edit makes each change"
	case in.subagent() && teamWork[name]:
		return "only the lead and its teammates work a team; a " + in.Role.String() + " reports with its final message"
	case in.subagent() && delegation[name] && !in.Def.ListsAgent():
		return "a " + in.Role.String() + " starts no agents and messages none unless its definition lists Agent; do the work yourself"
	case customAgentDisallowed[name] && (in.Def == nil || !in.Def.BuiltIn):
		return "custom agents never get it"
	case in.Role == RoleBackground && !asyncAgentAllowed[name] && !delegation[name]:
		return "background agents cannot use it"
	case in.Role == RoleTeammate && !asyncAgentAllowed[name] && !teammateExtra[name]:
		return "teammates cannot use it"
	}
	if d := in.Def; d != nil {
		if d.Tools != nil && !slices.Contains(d.Tools, "*") && !matchAny(d.Tools, name) {
			return "not in the definition's tools"
		}
		if matchAny(d.DisallowedTools, name) {
			return "in the definition's disallowedTools"
		}
	}
	if !in.planAllows(name) {
		return "plan mode keeps only read-only tools"
	}
	return ""
}

// OnDemand reports whether the agent in describes is offered the tool name
// on demand rather than with its definition at a glance (tool/toolsearch).
// A definition that names the tool gets it loaded, a teammate its team's
// task list (its work), a coordinator everything (its array is short), and
// an agent whose definition disallows ToolSearch nothing on demand.
func (in PoolInput) OnDemand(name string) bool {
	d := in.Def
	switch {
	case isMCP(name) && (!in.MCPOnDemand || d.namesServerOf(name)):
		return false
	case !isMCP(name) && !onDemand[name], d.names(name):
		return false
	case d != nil && matchAny(d.DisallowedTools, "ToolSearch"):
		return false
	case in.Role == RoleTeammate && teamWork[name]:
		return false
	case in.Role == RoleMain && in.Coordinator:
		return false
	}
	return true
}

// mcpShareOfWindow and windowTokens make MCPOnDemand's threshold: MCP tools
// wait for ToolSearch once their definitions would take more than a tenth
// of a 200,000-token context window, counted at 4 bytes a token (80,000
// bytes), as Claude Code's default (ENABLE_TOOL_SEARCH=auto) does.
const (
	mcpShareOfWindow = 10 // per cent
	windowTokens     = 200_000
	bytesPerToken    = 4
)

// MCPOnDemand reports whether the MCP tools among defs are many enough to
// be offered on demand: their names, descriptions and input schemas
// together over mcpShareOfWindow per cent of the window. Below it every
// request carries them whole, as the built-in tools; above it the model
// reads their names in ToolSearch's description and loads what it needs,
// and a session with a few large servers stops paying for all of their
// definitions on every request of every agent.
func MCPOnDemand(defs []llm.ToolDef) bool {
	n := 0
	for _, d := range defs {
		if isMCP(d.Name) {
			n += len(d.Name) + len(d.Description) + len(d.InputSchema)
		}
	}
	return n > windowTokens*bytesPerToken*mcpShareOfWindow/100
}

// namesServerOf reports whether d's tools list names the MCP tool name or
// its whole server ("mcp__srv", "mcp__srv__*"; "*" does not count).
func (d *Definition) namesServerOf(name string) bool {
	if d == nil {
		return false
	}
	for _, e := range d.Tools {
		if e != "*" && matchAny([]string{e}, name) {
			return true
		}
	}
	return false
}

// subagent reports whether the pool is a subagent's, synchronous or in the
// background.
// NamedOnly reports whether a subagent or background agent has the tool
// only when its definition names it (one that duplicates another tool).
func NamedOnly(name string) bool { return namedOnly[name] }

// names reports whether d's tools list names the tool itself ("*" does
// not).
func (d *Definition) names(name string) bool {
	return d != nil && slices.Contains(d.Tools, name)
}

func (in PoolInput) subagent() bool { return in.Role == RoleSubagent || in.Role == RoleBackground }

func (in PoolInput) planAllows(name string) bool {
	return !in.PlanMode || name == "ExitPlanMode" || in.ReadOnly != nil && in.ReadOnly(name)
}

// explain warns about tools the definition lists explicitly but the agent
// does not get.
func (in PoolInput) explain(seen map[string]bool, why map[string]string) []Warning {
	d := in.Def
	if d == nil || d.Tools == nil {
		return nil
	}
	var warns []Warning
	for _, name := range d.Tools {
		reason := why[name]
		switch {
		case name == "*" || isMCP(name) && !seen[name] || name == "ToolSearch":
			continue // a pattern, a server that is not connected, or the search an agent with tools on demand gets
		case !seen[name]:
			reason = "no such tool is available"
		case reason == "":
			continue
		}
		warns = append(warns, Warning{Path: d.Source.Path,
			Message: fmt.Sprintf("agent %q lists %s, which it does not get as a %s: %s", d.Name, name, in.Role, reason)})
	}
	return warns
}

// Excluded returns, for each tool of all the pool leaves out, why: the
// words a model reads when it calls a tool its role lacks.
func Excluded(all []string, in PoolInput) map[string]string {
	out := map[string]string{}
	own := set(in.OwnMCP...)
	for _, name := range all {
		if own[name] {
			continue
		}
		if reason := in.exclude(name); reason != "" {
			out[name] = reason
		}
	}
	return out
}

// matchAny reports whether a tools-list entry names the tool: exactly, "*",
// or for MCP a whole server ("mcp__srv" or "mcp__srv__*").
func matchAny(list []string, name string) bool {
	for _, e := range list {
		switch {
		case e == name, e == "*":
			return true
		case isMCP(e) && isMCP(name):
			prefix := strings.TrimSuffix(e, "*")
			if !strings.HasSuffix(prefix, "__") {
				prefix += "__"
			}
			if strings.Count(prefix, "__") == 2 && strings.HasPrefix(name, prefix) {
				return true
			}
		}
	}
	return false
}
