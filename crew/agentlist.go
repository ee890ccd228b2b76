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
// tool's description or (with agent_list_attachment) a system reminder.
func AgentList(cat *agentdef.Catalog) string {
	var b strings.Builder
	b.WriteString("Agent types (subagent_type):\n")
	for _, d := range cat.List() {
		tools := "all tools"
		if len(d.Tools) > 0 {
			tools = strings.Join(d.Tools, ", ")
		}
		fmt.Fprintf(&b, "- %s: %s (Tools: %s)\n", d.Name, strings.Join(strings.Fields(d.Description), " "), tools)
	}
	return strings.TrimRight(b.String(), "\n")
}
