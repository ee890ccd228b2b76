package agentdef

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm"
)

// TestMCPOnDemandThreshold: MCP definitions over a tenth of a
// 200,000-token window at 4 bytes a token (80,000 bytes) are offered on
// demand; at or under it, or built-in tools however large, they are not.
func TestMCPOnDemandThreshold(t *testing.T) {
	def := func(name string, size int) llm.ToolDef {
		return llm.ToolDef{Name: name, Description: strings.Repeat("d", size-len(name))}
	}
	cases := []struct {
		name string
		defs []llm.ToolDef
		want bool
	}{
		{"none", nil, false},
		{"at the threshold", []llm.ToolDef{def("mcp__a__x", 40_000), def("mcp__a__y", 40_000)}, false},
		{"one byte over", []llm.ToolDef{def("mcp__a__x", 40_000), def("mcp__b__y", 40_001)}, true},
		{"built-in tools do not count", []llm.ToolDef{def("Bash", 90_000), def("mcp__a__x", 100)}, false},
	}
	for _, c := range cases {
		if got := MCPOnDemand(c.defs); got != c.want {
			t.Errorf("%s: MCPOnDemand = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMCPOnDemandExceptions: with MCPOnDemand set, an MCP tool waits unless
// the definition names it or its server ("*" does not count) or disallows
// ToolSearch; without it none waits.
func TestMCPOnDemandExceptions(t *testing.T) {
	const name = "mcp__docs__lookup"
	cases := []struct {
		why  string
		in   PoolInput
		want bool
	}{
		{"under the threshold", PoolInput{Role: RoleSubagent}, false},
		{"over it", PoolInput{Role: RoleSubagent, MCPOnDemand: true}, true},
		{"the lead too", PoolInput{Role: RoleMain, MCPOnDemand: true}, true},
		{"named", PoolInput{Role: RoleSubagent, MCPOnDemand: true, Def: &Definition{Tools: []string{name}}}, false},
		{"its server named", PoolInput{Role: RoleSubagent, MCPOnDemand: true, Def: &Definition{Tools: []string{"mcp__docs"}}}, false},
		{"its server's star", PoolInput{Role: RoleSubagent, MCPOnDemand: true, Def: &Definition{Tools: []string{"mcp__docs__*"}}}, false},
		{"another server named", PoolInput{Role: RoleSubagent, MCPOnDemand: true, Def: &Definition{Tools: []string{"Read", "mcp__web"}}}, true},
		{"star", PoolInput{Role: RoleSubagent, MCPOnDemand: true, Def: &Definition{Tools: []string{"*"}}}, true},
		{"no ToolSearch", PoolInput{Role: RoleSubagent, MCPOnDemand: true, Def: &Definition{DisallowedTools: []string{"ToolSearch"}}}, false},
	}
	for _, c := range cases {
		if got := c.in.OnDemand(name); got != c.want {
			t.Errorf("%s: OnDemand = %v, want %v", c.why, got, c.want)
		}
	}
}
