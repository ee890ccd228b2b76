package crew

import (
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
)

// AgentToolName is the Agent tool's name (Claude Code's): a pool that holds
// it can spawn agents.
const AgentToolName = "Agent"

// AgentList renders the available agent types, one per line, for the Agent
// tool's description or (with agent_list_attachment) a system reminder. A
// type without a tools list does not get all of the lead's tools (the
// pool keeps delegation and team work from subagents), and its line says
// so: a lead told "all tools" plans on a subagent that spawns or messages.
func AgentList(cat *agentdef.Catalog) string {
	var b strings.Builder
	b.WriteString("Agent types (subagent_type):\n")
	for _, d := range cat.List() {
		tools := "all tools except Agent, SendMessage and the team and task-list tools"
		if len(d.Tools) > 0 {
			tools = strings.Join(d.Tools, ", ")
		}
		fmt.Fprintf(&b, "- %s: %s (Tools: %s)\n", d.Name, strings.Join(strings.Fields(d.Description), " "), tools)
	}
	return strings.TrimRight(b.String(), "\n")
}
