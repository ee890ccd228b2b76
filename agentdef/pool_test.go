package agentdef

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// allTools is every tool in the order the registry would hand them over.
var allTools = []string{"Agent", "Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite", "WebFetch",
	"NotebookEdit", "SendMessage", "TeamCreate", "TeamDelete", "TaskOutput", "TaskStop", "TaskCreate",
	"TaskGet", "TaskUpdate", "TaskList", "EnterWorktree", "ExitWorktree", "EnterPlanMode", "ExitPlanMode",
	"AskUserQuestion", "mcp__gh__pr", "mcp__gh__issue", "mcp__db__query"}

var readOnlySet = set("Bash", "Read", "Glob", "Grep", "WebFetch", "TaskGet", "TaskList", "mcp__db__query")

func readOnly(name string) bool { return readOnlySet[name] }

func minus(list []string, drop ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(drop, s) })
}

var (
	mcpAll = []string{"mcp__gh__pr", "mcp__gh__issue", "mcp__db__query"}
	// a subagent of a built-in type, below the depth limit: no lead-only
	// tools, no Agent (its definition does not list it) and no team tools
	subagentAll = minus(allTools, "TaskOutput", "TaskStop", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion",
		"Agent", "SendMessage", "TeamCreate", "TeamDelete", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList")
	customAll = subagentAll
	asyncAll  = append([]string{"Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite", "WebFetch",
		"NotebookEdit", "EnterWorktree", "ExitWorktree"}, mcpAll...)
	teammateAll = append([]string{"Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite", "WebFetch",
		"NotebookEdit", "SendMessage", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "EnterWorktree",
		"ExitWorktree"}, mcpAll...)
)

func builtin(tools ...string) *Definition {
	return &Definition{Name: "b", BuiltIn: true, Tools: tools}
}

func custom(tools []string, disallowed ...string) *Definition {
	return &Definition{Name: "c", Tools: tools, DisallowedTools: disallowed, Source: Source{Level: LevelProject, Path: "/p/c.md"}}
}

func TestPool(t *testing.T) {
	tests := []struct {
		name string
		in   PoolInput
		want []string
	}{
		// The lead.
		{"main gets everything", PoolInput{Role: RoleMain, MaxDepth: 3}, allTools},
		{"main with max depth 0 loses Agent", PoolInput{Role: RoleMain}, minus(allTools, "Agent")},
		{"main in coordinator mode", PoolInput{Role: RoleMain, MaxDepth: 3, Coordinator: true},
			[]string{"Agent", "SendMessage", "TaskOutput", "TaskStop"}},
		{"coordinator without nesting", PoolInput{Role: RoleMain, Coordinator: true},
			[]string{"SendMessage", "TaskOutput", "TaskStop"}},
		{"main in plan mode", PoolInput{Role: RoleMain, MaxDepth: 3, PlanMode: true, ReadOnly: readOnly},
			[]string{"Bash", "Read", "Glob", "Grep", "WebFetch", "TaskGet", "TaskList", "ExitPlanMode", "mcp__db__query"}},
		{"plan mode without a predicate keeps ExitPlanMode only", PoolInput{Role: RoleMain, MaxDepth: 3, PlanMode: true},
			[]string{"ExitPlanMode"}},
		{"main running a definition", PoolInput{Role: RoleMain, MaxDepth: 3, Def: custom([]string{"TeamCreate", "Read", "Agent"})},
			[]string{"Agent", "Read", "TeamCreate"}},

		// Layer 1: lead-only tools and depth.
		{"built-in subagent", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: builtin()}, subagentAll},
		{"built-in subagent at the depth limit", PoolInput{Role: RoleSubagent, Depth: 3, MaxDepth: 3, Def: builtin()},
			subagentAll},
		{"just below the limit keeps Agent", PoolInput{Role: RoleSubagent, Depth: 2, MaxDepth: 3, Def: builtin("Agent")},
			[]string{"Agent"}},
		{"coordinator flag does not reach subagents", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: builtin(), Coordinator: true},
			subagentAll},

		// Layer 2: custom definitions.
		{"custom subagent", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom(nil)}, customAll},
		{"nil definition counts as custom", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3}, customAll},
		{"custom at the limit", PoolInput{Role: RoleSubagent, Depth: 3, MaxDepth: 3, Def: custom(nil)}, customAll},
		{"a definition that lists Agent delegates", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3,
			Def: custom([]string{"Agent", "Read", "SendMessage", "TaskList", "TeamCreate"})}, []string{"Agent", "Read", "SendMessage"}},
		{"listing Agent does not pass the depth limit", PoolInput{Role: RoleSubagent, Depth: 3, MaxDepth: 3,
			Def: custom([]string{"Agent", "Read", "SendMessage"})}, []string{"Read", "SendMessage"}},
		{"SendMessage alone is not delegation", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3,
			Def: custom([]string{"Read", "SendMessage"})}, []string{"Read"}},

		// Layer 3: background agents and teammates.
		{"background built-in", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: builtin()}, asyncAll},
		{"background custom", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom(nil)}, asyncAll},
		{"teammate", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3, Def: custom(nil)}, teammateAll},
		{"teammate without definition", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3}, teammateAll},
		// An agent started in a worktree cannot leave it: no worktree tools.
		{"isolated subagent", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: builtin(), Isolated: true},
			minus(subagentAll, "EnterWorktree", "ExitWorktree")},
		{"isolated teammate", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3, Isolated: true},
			minus(teammateAll, "EnterWorktree", "ExitWorktree")},
		{"the lead in a worktree keeps them", PoolInput{Role: RoleMain, MaxDepth: 3, Isolated: true}, allTools},

		// Layers 4 and 5: the definition's lists.
		{"star is all", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"*"})}, customAll},
		{"explicit tools keep allTools order", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Grep", "Read", "Agent"})},
			[]string{"Agent", "Read", "Grep"}},
		{"empty tools means none", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{})}, nil},
		{"disallowed removed", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom(nil, "Bash", "Agent", "mcp__gh")},
			minus(customAll, "Bash", "Agent", "mcp__gh__pr", "mcp__gh__issue")},
		{"disallow beats allow", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "Bash"}, "Bash")},
			[]string{"Read"}},
		{"disallow star leaves nothing", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom(nil, "*")}, nil},
		{"background with tools", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "SendMessage", "Agent", "mcp__db__query"})},
			[]string{"Agent", "Read", "SendMessage", "mcp__db__query"}},
		{"background without Agent listed", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "SendMessage", "mcp__db__query"})},
			[]string{"Read", "mcp__db__query"}},
		{"teammate with tools and deny", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "SendMessage", "TeamCreate"}, "Read")},
			[]string{"SendMessage"}},

		// Layer 6: MCP tools.
		{"MCP passes the type filters of a background agent", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom([]string{"mcp__gh__issue"})},
			[]string{"mcp__gh__issue"}},
		{"MCP obeys the definition's tools", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read"})},
			[]string{"Read"}},
		{"whole server by name", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "mcp__gh"})},
			[]string{"Read", "mcp__gh__pr", "mcp__gh__issue"}},
		{"whole server by wildcard", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"mcp__gh__*"})},
			[]string{"mcp__gh__pr", "mcp__gh__issue"}},
		// mcp__gh__pr is a session server's tool the definition names in
		// mcpServers: it moves past the tools list too, to the end.
		{"own MCP servers bypass tools", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read"}),
			OwnMCP: []string{"mcp__own__a", "mcp__gh__pr", "NotMCP", "mcp__own__a"}},
			[]string{"Read", "mcp__own__a", "mcp__gh__pr"}},
		{"own MCP obeys disallowedTools", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{}, "mcp__own"),
			OwnMCP: []string{"mcp__own__a", "mcp__other__b"}},
			[]string{"mcp__other__b"}},
		{"own MCP obeys plan mode", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{}), PlanMode: true,
			ReadOnly: func(n string) bool { return n == "mcp__own__ro" }, OwnMCP: []string{"mcp__own__rw", "mcp__own__ro"}},
			[]string{"mcp__own__ro"}},

		// Plan mode.
		{"subagent in plan mode has no ExitPlanMode", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: builtin(), PlanMode: true, ReadOnly: readOnly},
			[]string{"Bash", "Read", "Glob", "Grep", "WebFetch", "mcp__db__query"}},
		{"teammate in plan mode keeps ExitPlanMode", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3, PlanMode: true, ReadOnly: readOnly},
			[]string{"Bash", "Read", "Glob", "Grep", "WebFetch", "TaskGet", "TaskList", "ExitPlanMode", "mcp__db__query"}},
		{"background in plan mode", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, PlanMode: true, ReadOnly: readOnly},
			[]string{"Bash", "Read", "Glob", "Grep", "WebFetch", "mcp__db__query"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := Pool(allTools, tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			again, _ := Pool(allTools, tt.in)
			if !slices.Equal(got, again) {
				t.Error("the same input gave a different pool")
			}
		})
	}
}

func TestPoolBuiltIns(t *testing.T) {
	byName := map[string]*Definition{}
	for _, d := range BuiltIns(nil) {
		byName[d.Name] = d
	}
	tests := []struct {
		agent string
		in    PoolInput
		want  []string
	}{
		{GeneralPurpose, PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3}, subagentAll},
		{Explore, PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, PlanMode: true, ReadOnly: readOnly},
			[]string{"Bash", "Read", "Glob", "Grep"}},
		{Plan, PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, PlanMode: true, ReadOnly: readOnly},
			[]string{"Bash", "Read", "Glob", "Grep", "WebFetch"}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			tt.in.Def = byName[tt.agent]
			got, warns := Pool(allTools, tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(warns) != 0 {
				t.Errorf("warnings: %v", warns)
			}
		})
	}
}

func TestPoolDropsDuplicates(t *testing.T) {
	got, _ := Pool([]string{"Read", "Bash", "Read", "mcp__a__b", "mcp__a__b"}, PoolInput{Role: RoleMain})
	if diff := cmp.Diff([]string{"Read", "Bash", "mcp__a__b"}, got); diff != "" {
		t.Error(diff)
	}
}

func TestPoolWarnings(t *testing.T) {
	tests := []struct {
		name string
		in   PoolInput
		want []string
	}{
		{"no warnings without a tools list", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom(nil)}, nil},
		{"lead-only tool", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "TaskStop"})},
			[]string{`agent "c" lists TaskStop, which it does not get as a subagent: only the lead has it`}},
		{"depth", PoolInput{Role: RoleSubagent, Depth: 3, MaxDepth: 3, Def: custom([]string{"Agent"})},
			[]string{`agent "c" lists Agent, which it does not get as a subagent: the nesting limit (depth 3, max 3)`}},
		{"custom", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"TeamCreate"})},
			[]string{`agent "c" lists TeamCreate, which it does not get as a subagent: only the lead and its teammates work a team; a subagent reports with its final message`}},
		{"async", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom([]string{"SendMessage"})},
			[]string{`agent "c" lists SendMessage, which it does not get as a background agent: a background agent starts no agents and messages none unless its definition lists Agent; do the work yourself`}},
		{"async lead-only", PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3, Def: custom([]string{"NotebookEdit", "EnterPlanMode"})},
			[]string{`agent "c" lists EnterPlanMode, which it does not get as a background agent: only the lead has it`}},
		{"teammate", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3, Def: custom([]string{"TaskStop"})},
			[]string{`agent "c" lists TaskStop, which it does not get as a teammate: only the lead has it`}},
		{"built-in teammate", PoolInput{Role: RoleTeammate, Depth: 1, MaxDepth: 3, Def: builtin("TeamDelete")},
			[]string{`agent "b" lists TeamDelete, which it does not get as a teammate: teammates cannot use it`}},
		{"plan mode", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, PlanMode: true, ReadOnly: readOnly, Def: custom([]string{"Write"})},
			[]string{`agent "c" lists Write, which it does not get as a subagent: plan mode keeps only read-only tools`}},
		{"denied too", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "Bash"}, "Bash")},
			[]string{`agent "c" lists Bash, which it does not get as a subagent: in the definition's disallowedTools`}},
		{"missing tool", PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: custom([]string{"Read", "NotHere", "mcp__gone__x", "mcp__gone"})},
			[]string{`agent "c" lists NotHere, which it does not get as a subagent: no such tool is available`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warns := Pool(allTools, tt.in)
			var got []string
			for _, w := range warns {
				if w.Path != tt.in.Def.Source.Path {
					t.Errorf("warning path %q", w.Path)
				}
				got = append(got, w.Message)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

type fakeTool string

func (f fakeTool) Def() llm.ToolDef                   { return llm.ToolDef{Name: string(f)} }
func (f fakeTool) Traits(json.RawMessage) tool.Traits { return tool.Traits{} }
func (f fakeTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Text(string(f)), nil
}

func TestPoolTools(t *testing.T) {
	var all []tool.Tool
	for _, n := range allTools {
		all = append(all, fakeTool(n))
	}
	got, _ := PoolTools(all, PoolInput{Role: RoleBackground, Depth: 1, MaxDepth: 3})
	var names []string
	for _, tl := range got {
		names = append(names, tl.Def().Name)
	}
	if diff := cmp.Diff(asyncAll, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMatchAny(t *testing.T) {
	tests := []struct {
		entry, name string
		want        bool
	}{
		{"Read", "Read", true},
		{"Read", "ReadX", false},
		{"*", "anything", true},
		{"mcp__gh", "mcp__gh__pr", true},
		{"mcp__gh__*", "mcp__gh__pr", true},
		{"mcp__gh", "mcp__ghx__pr", false},
		{"mcp__gh__pr", "mcp__gh__pr", true},
		{"mcp__gh__pr", "mcp__gh__pr2", false},
		{"mcp__*", "mcp__gh__pr", false},
		{"mcp__gh", "Read", false},
	}
	for _, tt := range tests {
		if got := matchAny([]string{tt.entry}, tt.name); got != tt.want {
			t.Errorf("matchAny(%q, %q) = %v", tt.entry, tt.name, got)
		}
	}
	if strings.Contains(RoleTeammate.String(), "Role(") {
		t.Error("Role has no name")
	}
}

func TestExcludedSaysWhy(t *testing.T) {
	got := Excluded(allTools, PoolInput{Role: RoleSubagent, Depth: 1, MaxDepth: 3, Def: builtin()})
	for _, name := range []string{"Agent", "SendMessage", "TeamCreate", "TaskList", "TaskOutput"} {
		if got[name] == "" {
			t.Errorf("%s: no reason given", name)
		}
	}
	for _, name := range []string{"Bash", "Read", "mcp__gh__pr"} {
		if r, ok := got[name]; ok {
			t.Errorf("%s is in the pool but excluded: %q", name, r)
		}
	}
	if !strings.Contains(got["Agent"], "unless its definition lists Agent") {
		t.Errorf("Agent: %q", got["Agent"])
	}
}

// TestDuplicatesOnlyWhenNamed: LS and MultiEdit (what Glob and Edit do)
// reach a subagent or background agent only when its definition names
// them; the lead and teammates keep them, and a refusal says what to use.
func TestDuplicatesOnlyWhenNamed(t *testing.T) {
	all := []string{"Bash", "Glob", "LS", "Edit", "MultiEdit"}
	for _, tc := range []struct {
		name string
		in   PoolInput
		want []string
	}{
		{"lead", PoolInput{Role: RoleMain}, all},
		{"teammate", PoolInput{Role: RoleTeammate, Depth: 1}, all},
		{"general subagent", PoolInput{Role: RoleSubagent, Depth: 1, Def: builtin("*")}, []string{"Bash", "Glob", "Edit"}},
		{"background, no definition", PoolInput{Role: RoleBackground, Depth: 1}, []string{"Bash", "Glob", "Edit"}},
		{"subagent naming LS", PoolInput{Role: RoleSubagent, Depth: 1, Def: custom([]string{"Glob", "LS"})}, []string{"Glob", "LS"}},
		{"background naming MultiEdit", PoolInput{Role: RoleBackground, Depth: 1, Def: custom([]string{"MultiEdit", "Edit"})}, []string{"Edit", "MultiEdit"}},
	} {
		got, _ := Pool(all, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: %s", tc.name, diff)
		}
	}
	why := Excluded(all, PoolInput{Role: RoleSubagent, Depth: 1})["MultiEdit"]
	if !strings.Contains(why, "Edit makes each change") {
		t.Errorf("MultiEdit refused with %q", why)
	}
}
