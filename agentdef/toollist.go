package agentdef

import (
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"

	"go.yaml.in/yaml/v3"
)

// CohortTools names every tool Cohort can provide, whether or not a given
// session has it: the team and task-list tools need agent_teams, TaskOutput
// and TaskStop a task registry, WebSearch a provider with server-side
// search. A definition naming one the session lacks keeps the name without
// a warning (it is a real tool, not a typo); the pool then takes only what
// the session has.
var CohortTools = []string{
	"Agent", "Bash", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit",
	"WebFetch", "WebSearch", "TodoWrite", "TaskOutput", "TaskStop", "EnterWorktree", "ExitWorktree",
	"EnterPlanMode", "ExitPlanMode", "SendMessage", "ListAgents", "TeamCreate", "TeamDelete",
	"TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "Skill", "ListMcpResourcesTool", "ReadMcpResourceTool",
	"Workflow", "ToolSearch",
}

// conditional are Cohort tools that only some providers or settings make
// available; naming one a session lacks draws a warning saying why.
var conditional = map[string]string{
	"WebSearch": "WebSearch needs a provider with server-side web search (the Anthropic API)",
}

// notProvided are Claude Code tools Cohort has no counterpart for; a
// definition naming them loads with a warning and without them.
var notProvided = []string{
	"AskUserQuestion", "BashOutput", "KillShell", "KillBash", "LSP",
	"NotebookRead", "SlashCommand", "TodoRead",
}

// legacyNames maps old Claude Code tool names to today's.
var legacyNames = map[string]string{"Task": "Agent"}

// CanonicalTool is a tool's name as Cohort knows it: an old Claude Code
// name ("Task") becomes today's ("Agent").
func CanonicalTool(name string) string {
	if n, ok := legacyNames[name]; ok {
		return n
	}
	return name
}

// ref is one entry of a tools-like list: `Read`, `Agent(worker, reviewer)`.
type ref struct {
	text   string // the entry as written, trimmed
	name   string
	arg    string
	hasArg bool
	node   *yaml.Node
}

var refPattern = lazyre.New(`^([^()\s,]+)\s*(?:\(([^()]*)\))?$`)

// refs reads a YAML list of strings or one comma-separated string (commas
// inside parentheses do not split). present is false when the key is null
// or an empty string; an empty list is present and empty.
func (dc *decoder) refs(key string, v *yaml.Node) (out []ref, present bool) {
	switch {
	case isNull(v):
		return nil, false
	case v.Kind == yaml.ScalarNode:
		if strings.TrimSpace(v.Value) == "" {
			return nil, false
		}
		out = []ref{}
		for _, part := range splitTop(v.Value) {
			out = dc.appendRef(out, key, part, v)
		}
		return out, true
	case v.Kind == yaml.SequenceNode:
		out = []ref{}
		// In a flow list, [Read, Agent(a, b)], YAML splits inside the
		// parentheses; items are joined back until they balance.
		var pending string
		var pendingNode *yaml.Node
		for _, item := range v.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode || isNull(item) {
				dc.errorf(item, "%s: entries must be text, got %s", key, kindName(item))
				continue
			}
			text, node := item.Value, item
			if pendingNode != nil {
				text, node = pending+", "+text, pendingNode
			}
			if strings.Count(text, "(") > strings.Count(text, ")") {
				pending, pendingNode = text, node
				continue
			}
			pending, pendingNode = "", nil
			out = dc.appendRef(out, key, text, node)
		}
		if pendingNode != nil {
			out = dc.appendRef(out, key, pending, pendingNode)
		}
		return out, true
	}
	dc.errorf(v, "%s: want a list or a comma-separated string, got %s", key, kindName(v))
	return nil, false
}

func (dc *decoder) appendRef(out []ref, key, text string, n *yaml.Node) []ref {
	text = strings.TrimSpace(text)
	if text == "" {
		return out
	}
	m := refPattern.FindStringSubmatch(text)
	if m == nil {
		dc.warnf(n, "%s: %q is not a tool name; ignored", key, text)
		return out
	}
	return append(out, ref{text: text, name: m[1], arg: m[2], hasArg: strings.Contains(text, "("), node: n})
}

// splitTop splits s at commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func canonical(name string) string {
	if n, ok := legacyNames[name]; ok {
		return n
	}
	return name
}

// usable reports whether a named tool can be kept, warning when it cannot.
func (dc *decoder) usable(key string, r ref, name string) bool {
	switch {
	case name == "*", isMCP(name), dc.known == nil, dc.known[name]:
		return true
	case conditional[name] != "":
		dc.warnf(r.node, "%s: %s, which this session lacks; ignored", key, conditional[name])
	case slices.Contains(CohortTools, name):
		return true
	case slices.Contains(notProvided, name):
		dc.warnf(r.node, "%s: Cohort does not provide %s; ignored", key, name)
	default:
		dc.warnf(r.node, "%s: unknown tool %q ignored", key, r.name)
	}
	return false
}

// allowList reads "tools". tools is nil when absent or "*" is listed (all
// tools); agentTypes is nil unless Agent(x, …) restricts spawning.
func (dc *decoder) allowList(key string, v *yaml.Node) (tools, agentTypes []string) {
	rs, present := dc.refs(key, v)
	if !present {
		return nil, nil
	}
	tools = []string{}
	all, bareAgent, restricted := false, false, false
	for _, r := range rs {
		name := canonical(r.name)
		if !dc.usable(key, r, name) {
			continue
		}
		switch {
		case name == "*":
			all = true
			continue
		case name == "Agent" && r.hasArg:
			restricted = true
			agentTypes = dc.appendAgentTypes(agentTypes, key, r)
		case name == "Agent":
			bareAgent = true
		case r.hasArg:
			dc.warnf(r.node, "%s: the specifier in %q is ignored (tools lists whole tools; use permission rules to narrow them)", key, r.text)
		}
		if !slices.Contains(tools, name) {
			tools = append(tools, name)
		}
	}
	if bareAgent || !restricted {
		agentTypes = nil
	} else if agentTypes == nil {
		agentTypes = []string{}
	}
	if all {
		tools = nil
	}
	return tools, agentTypes
}

func (dc *decoder) appendAgentTypes(types []string, key string, r ref) []string {
	named := false
	for _, t := range strings.Split(r.arg, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		named = true
		if !NamePattern.MatchString(t) {
			dc.warnf(r.node, "%s: %q in %q is not a valid agent name; ignored", key, t, r.text)
			continue
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	if !named {
		dc.warnf(r.node, "%s: %q names no agent types, so this agent can spawn none", key, r.text)
	}
	return types
}

// denyList reads "disallowedTools". An entry with a specifier removes the
// whole tool: failing closed is the safe reading of a deny.
func (dc *decoder) denyList(key string, v *yaml.Node) []string {
	rs, present := dc.refs(key, v)
	if !present {
		return nil
	}
	out := []string{}
	for _, r := range rs {
		name := canonical(r.name)
		if !dc.usable(key, r, name) {
			continue
		}
		if r.hasArg {
			dc.warnf(r.node, "%s: %q removes all of %s (specifiers are not supported here; use permission deny rules to narrow)", key, r.text, name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func isMCP(name string) bool { return strings.HasPrefix(name, "mcp__") }
