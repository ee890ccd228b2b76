package agentdef

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var known = []string{"Agent", "Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite", "WebFetch",
	"NotebookEdit", "SendMessage", "TeamCreate", "TeamDelete", "TaskOutput", "TaskStop", "TaskCreate",
	"TaskGet", "TaskUpdate", "TaskList", "EnterWorktree", "ExitWorktree", "EnterPlanMode", "ExitPlanMode",
	"AskUserQuestion"}

const fullFile = `---
name: reviewer
description: Reviews a diff for bugs
tools: [Read, Grep, "Agent(worker, fixer)", mcp__github__get_pr]
disallowedTools: Bash, Write
model: sonnet
permissionMode: acceptEdits
maxTurns: 12
mcpServers:
  github:
    command: gh-mcp
    args: [--stdio]
    port: 8080
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{type: command, command: ./check.sh}]
memory: project
background: true
effort: High
isolation: worktree
color: Purple
initialPrompt: Review the last commit.
---

You review code.

Be terse.
`

func TestParseFullFile(t *testing.T) {
	d, warns, err := Parse("/a/reviewer.md", []byte(fullFile), known)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("unexpected warnings: %v", warns)
	}
	want := &Definition{
		Name:            "reviewer",
		Description:     "Reviews a diff for bugs",
		Tools:           []string{"Read", "Grep", "Agent", "mcp__github__get_pr"},
		AgentTypes:      []string{"worker", "fixer"},
		DisallowedTools: []string{"Bash", "Write"},
		Model:           "sonnet",
		PermissionMode:  "acceptEdits",
		MaxTurns:        12,
		MCPServers: map[string]any{"github": map[string]any{
			"command": "gh-mcp", "args": []any{"--stdio"}, "port": 8080}},
		Hooks: map[string]any{"PreToolUse": []any{map[string]any{
			"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "./check.sh"}}}}},
		Memory:        "project",
		Background:    true,
		Effort:        "high",
		Isolation:     "worktree",
		Color:         "purple",
		InitialPrompt: "Review the last commit.",
		Prompt:        "You review code.\n\nBe terse.",
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := json.Marshal(d.MCPServers); err != nil {
		t.Errorf("mcpServers is not JSON-compatible: %v", err)
	}
	if !d.CanSpawn("worker") || d.CanSpawn("general-purpose") {
		t.Error("Agent(worker, fixer) does not restrict spawning")
	}
}

func TestParseShapes(t *testing.T) {
	head := "---\nname: x\ndescription: d\n"
	tests := []struct {
		name string
		file string
		want *Definition
	}{
		{"tools as comma string", head + "tools: Read, Grep ,Glob\n---\nbody",
			&Definition{Tools: []string{"Read", "Grep", "Glob"}}},
		{"comma string keeps Agent(...) whole", head + "tools: Read, Agent(a, b), Task\n---\nbody",
			&Definition{Tools: []string{"Read", "Agent"}}},
		{"flow list splits Agent(...) and is joined back", head + "tools: [Read, Agent(a, b), Grep]\n---\nbody",
			&Definition{Tools: []string{"Read", "Agent", "Grep"}}},
		{"Task is Agent", head + "tools: [Task]\n---\nbody",
			&Definition{Tools: []string{"Agent"}}},
		{"star means all", head + "tools: '*'\n---\nbody", &Definition{}},
		{"star keeps Agent restriction", head + "tools: ['*', 'Agent(w)']\n---\nbody", &Definition{}},
		{"absent tools", head + "---\nbody", &Definition{}},
		{"null tools", head + "tools:\n---\nbody", &Definition{}},
		{"empty string tools", head + "tools: ''\n---\nbody", &Definition{}},
		{"empty list means none", head + "tools: []\n---\nbody", &Definition{Tools: []string{}}},
		{"duplicates dropped", head + "tools: Read, Read\n---\nbody", &Definition{Tools: []string{"Read"}}},
		{"CRLF and BOM", "\ufeff---\r\nname: x\r\ndescription: d\r\ntools: Read\r\n---\r\nline one\r\nline two\r\n",
			&Definition{Tools: []string{"Read"}, Prompt: "line one\nline two"}},
		{"fence with trailing space", "--- \nname: x\ndescription: d\n---  \nbody", &Definition{}},
		{"numeric name", "---\nname: 42\ndescription: d\n---\nbody", &Definition{Name: "42"}},
		{"name with dots", "---\nname: dotnet-framework-4.8-expert\ndescription: d\n---\nbody", &Definition{Name: "dotnet-framework-4.8-expert"}},
		{"unquoted star means all", head + "tools: *\n---\nbody", &Definition{}},
		{"well-formed hooks load", head + "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./guard.sh\n          timeout: 5\n---\nbody",
			&Definition{Hooks: map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
				"hooks": []any{map[string]any{"type": "command", "command": "./guard.sh", "timeout": 5}}}}}}},
		{"block scalar description", "---\nname: x\ndescription: |\n  line one\n  line two\n---\nbody",
			&Definition{Description: "line one\nline two"}},
		{"anchors and aliases", head + "model: &m haiku\ninitialPrompt: *m\n---\nbody",
			&Definition{Model: "haiku", InitialPrompt: "haiku"}},
		{"maxTurns as string", head + "maxTurns: '3'\n---\nbody", &Definition{MaxTurns: 3}},
		{"spend caps", head + "maxBudgetUsd: 0.25\nmaxTokens: 50000\n---\nbody", &Definition{MaxBudgetUSD: 0.25, MaxTokens: 50000}},
		{"a dollar sign", head + "maxBudgetUsd: '$2'\n---\nbody", &Definition{MaxBudgetUSD: 2}},
		{"body keeps inner fences", head + "---\nabove\n---\nbelow", &Definition{Prompt: "above\n---\nbelow"}},
		{"description with colon is repaired", "---\nname: x\ndescription: Use when: the build fails\n---\nbody",
			&Definition{Description: "Use when: the build fails"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _, err := Parse("f.md", []byte(tt.file), known)
			if err != nil {
				t.Fatal(err)
			}
			want := *tt.want
			want.Name = cmpOr(want.Name, "x")
			want.Description = cmpOr(want.Description, "d")
			want.Prompt = cmpOr(want.Prompt, "body")
			got := *d
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Definition{}, "AgentTypes")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestCohortToolsTheSessionLacks: a session without teams or a task
// registry does not know the team and task tools, but a definition naming
// them names real tools: they are kept without a warning, and the pool
// takes only what the session has.
func TestCohortToolsTheSessionLacks(t *testing.T) {
	d, warns, err := Parse("f.md", []byte("---\nname: x\ndescription: d\ntools: Read, TeamCreate, SendMessage, TaskCreate, TaskList, TaskOutput, Frobnicate\n---\nb"),
		[]string{"Read", "Bash"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Warning{{Path: "f.md", Line: 4, Message: `tools: unknown tool "Frobnicate" ignored`}}
	if diff := cmp.Diff(want, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Read", "TeamCreate", "SendMessage", "TaskCreate", "TaskList", "TaskOutput"}, d.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestParseAgentTypes(t *testing.T) {
	tests := []struct {
		tools string
		want  []string
	}{
		{"Read", nil},
		{"Agent", nil},
		{"Agent(worker)", []string{"worker"}},
		{"Agent(worker, reviewer), Agent(worker)", []string{"worker", "reviewer"}},
		{"Agent(worker), Agent", nil}, // a bare Agent lifts the restriction
		{"Agent()", []string{}},       // names none: may spawn nothing
		{"Task(worker)", []string{"worker"}},
		{"Agent(bad name!, ok)", []string{"ok"}},
		{"[Agent(x, y), Read]", []string{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.tools, func(t *testing.T) {
			d, _, err := Parse("f.md", []byte("---\nname: x\ndescription: d\ntools: "+tt.tools+"\n---\nb"), known)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.AgentTypes); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	head := "---\nname: x\ndescription: d\n"
	tests := []struct {
		name string
		file string
		line int
		says string
	}{
		{"no frontmatter", "# Just markdown\n", 1, "no frontmatter"},
		{"empty file", "", 1, "no frontmatter"},
		{"unclosed", "---\nname: x\ndescription: d\n", 1, "not closed"},
		{"empty frontmatter", "---\n---\nbody", 1, "empty"},
		{"yaml syntax", head + "model: @x\n---\nb", 4, "not valid YAML"},
		{"unclosed flow list", "---\nname: x\ndescription: [unclosed\n---\nb", 2, "not valid YAML"},
		{"bad indentation", "---\nname: x\n  description: d\n---\nb", 3, "not valid YAML"},
		{"not a mapping", "---\n- a\n- b\n---\nb", 2, "mapping"},
		{"missing name", "---\ndescription: d\n---\nb", 2, `"name" is required`},
		{"empty name", "---\nname: ''\ndescription: d\n---\nb", 2, `"name" is required`},
		{"bad name", "---\nname: -bad\ndescription: d\n---\nb", 2, "not valid"},
		{"name too long", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\nb", 2, "not valid"},
		{"missing description", "---\nname: x\n---\nb", 2, `"description" is required`},
		{"description a list", "---\nname: x\ndescription: [a]\n---\nb", 3, "want text"},
		{"bad permissionMode", head + "permissionMode: yolo\n---\nb", 4, "acceptEdits"},
		{"internal bubble mode", head + "permissionMode: bubble\n---\nb", 4, "permissionMode"},
		{"bad isolation", head + "isolation: docker\n---\nb", 4, "worktree, remote"},
		{"bad memory", head + "memory: global\n---\nb", 4, "user, project, local"},
		{"bad effort", head + "effort: extreme\n---\nb", 4, "low, medium, high, xhigh, max"},
		{"zero maxTurns", head + "maxTurns: 0\n---\nb", 4, "above 0"},
		{"negative maxTurns", head + "\nmaxTurns: -2\n---\nb", 5, "above 0"},
		{"float maxTurns", head + "maxTurns: 2.5\n---\nb", 4, "whole number"},
		{"zero maxBudgetUsd", head + "maxBudgetUsd: 0\n---\nb", 4, "US dollars above 0"},
		{"negative maxBudgetUsd", head + "\n\nmaxBudgetUsd: -1\n---\nb", 6, "US dollars above 0"},
		{"maxBudgetUsd not a number", head + "maxBudgetUsd: lots\n---\nb", 4, `got "lots"`},
		{"infinite maxBudgetUsd", head + "maxBudgetUsd: .inf\n---\nb", 4, "US dollars above 0"},
		{"maxBudgetUsd a list", head + "maxBudgetUsd: [1]\n---\nb", 4, "want text"},
		{"zero maxTokens", head + "maxTokens: 0\n---\nb", 4, "above 0"},
		{"float maxTokens", head + "maxTokens: 1.5\n---\nb", 4, "whole number"},
		{"bad background", head + "background: sometimes\n---\nb", 4, "true or false"},
		{"tools a mapping", head + "tools: {a: b}\n---\nb", 4, "list or a comma-separated"},
		{"tools entry a list", head + "tools:\n  - Read\n  - [x]\n---\nb", 6, "entries must be text"},
		{"duplicate key", head + "name: y\n---\nb", 4, "repeated (first on line 2)"},
		{"infinite number in mcpServers", head + "mcpServers: {a: .inf}\n---\nb", 4, "JSON"},
		{"hooks group without a hooks list", head + "hooks:\n  PreToolUse:\n    - matcher: Bash\n      command: ./guard.sh\n---\nb", 6, `no "hooks" list`},
		{"hooks a list", head + "hooks: [a]\n---\nb", 4, "mapping of event names"},
		{"hooks event a mapping", head + "hooks:\n  Stop: {hooks: []}\n---\nb", 5, "want a list of groups"},
		{"hook entry without type", head + "hooks:\n  Stop:\n    - hooks:\n        - command: ./x\n---\nb", 7, "type: want one of"},
		{"hook entry of an unknown type", head + "hooks:\n  Stop:\n    - hooks: [{type: shell, command: ./x}]\n---\nb", 6, "type: want one of"},
		{"command hook without command", head + "hooks:\n  Stop:\n    - hooks: [{type: command}]\n---\nb", 6, "needs command:"},
		{"hook timeout not a number", head + "hooks:\n  Stop:\n    - hooks: [{type: command, command: x, timeout: soon}]\n---\nb", 6, "timeout: want a number"},
		{"too big", head + "---\n" + strings.Repeat("x", MaxFileSize), 1, "limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _, err := Parse("/p/.cohort/agents/x.md", []byte(tt.file), known)
			if err == nil {
				t.Fatalf("no error; got %+v", d)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line != tt.line || pe.Path != "/p/.cohort/agents/x.md" {
				t.Errorf("error at %s:%d, want line %d: %v", pe.Path, pe.Line, tt.line, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
			if !strings.HasPrefix(err.Error(), "/p/.cohort/agents/x.md:") {
				t.Errorf("error %q does not start with the file", err)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	head := "---\nname: x\ndescription: d\n"
	tests := []struct {
		name  string
		file  string
		want  []Warning
		tools []string
	}{
		{"unknown key", head + "version: 2\n---\nb",
			[]Warning{{Line: 4, Message: `unknown key "version" ignored`}}, nil},
		{"skills", head + "skills: [pdf]\n---\nb", nil, nil},
		{"unknown color", head + "color: mauve\n---\nb",
			[]Warning{{Line: 4, Message: `color "mauve" is not one of red, blue, green, yellow, purple, orange, pink, cyan; ignored`}}, nil},
		{"unknown tool dropped", head + "tools:\n  - Read\n  - Frobnicate\n---\nb",
			[]Warning{{Line: 6, Message: `tools: unknown tool "Frobnicate" ignored`}}, []string{"Read"}},
		{"only unknown tools leaves none", head + "tools: Frobnicate\n---\nb",
			[]Warning{{Line: 4, Message: `tools: unknown tool "Frobnicate" ignored`}}, []string{}},
		{"tools Cohort lacks", head + "tools: Read, WebSearch, Skill, BashOutput, ToolSearch\n---\nb",
			[]Warning{
				{Line: 4, Message: "tools: WebSearch needs a provider with server-side web search (the Anthropic API), which this session lacks; ignored"},
				{Line: 4, Message: "tools: Cohort does not provide BashOutput; ignored"},
			}, []string{"Read", "Skill", "ToolSearch"}},
		{"specifier ignored in tools", head + "tools: Bash(git:*)\n---\nb",
			[]Warning{{Line: 4, Message: `tools: the specifier in "Bash(git:*)" is ignored (tools lists whole tools; use permission rules to narrow them)`}},
			[]string{"Bash"}},
		{"not a tool name", head + "tools: Read Grep\n---\nb",
			[]Warning{{Line: 4, Message: `tools: "Read Grep" is not a tool name; ignored`}}, []string{}},
		{"empty body", head + "---\n  \n",
			[]Warning{{Line: 1, Message: "the body is empty, so the agent has no system prompt"}}, nil},
		{"Claude Code tools Cohort lacks", head + "tools: Read, BashOutput, KillShell\n---\nb",
			[]Warning{
				{Line: 4, Message: "tools: Cohort does not provide BashOutput; ignored"},
				{Line: 4, Message: "tools: Cohort does not provide KillShell; ignored"},
			}, []string{"Read"}},
		{"unquoted star", head + "tools: *\n---\nb",
			[]Warning{{Line: 4, Message: `value * was read as text; write it in quotes ("*") so YAML does not take it for an alias`}}, nil},
		{"repaired colon", "---\nname: x\ndescription: a: b\n---\nb",
			[]Warning{{Line: 3, Message: `value contains ": " and was read as quoted text; put it in quotes so YAML reads it as intended`}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, warns, err := Parse("f.md", []byte(tt.file), known)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				tt.want[i].Path = "f.md"
			}
			if diff := cmp.Diff(tt.want, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.tools, d.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseDisallowedTools(t *testing.T) {
	d, warns, err := Parse("f.md", []byte("---\nname: x\ndescription: d\ndisallowedTools: [Write, Bash(rm:*), Nope, '*']\n---\nb"), known)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Write", "Bash", "*"}, d.DisallowedTools); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(warns) != 2 {
		t.Errorf("want warnings for Bash(rm:*) and Nope, got %v", warns)
	}
}

func TestParseWithoutKnownToolsKeepsNames(t *testing.T) {
	d, warns, err := Parse("f.md", []byte("---\nname: x\ndescription: d\ntools: Frobnicate\n---\nb"), nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("err %v, warnings %v", err, warns)
	}
	if diff := cmp.Diff([]string{"Frobnicate"}, d.Tools); diff != "" {
		t.Error(diff)
	}
}

func TestParseReportsEveryError(t *testing.T) {
	_, _, err := Parse("f.md", []byte("---\nname: x\ndescription: d\nmaxTurns: 0\neffort: huge\n---\nb"), known)
	var lines []int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		lines = append(lines, e.(*ParseError).Line)
	}
	if diff := cmp.Diff([]int{4, 5}, lines); diff != "" {
		t.Errorf("error lines (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	seeds := []string{
		fullFile,
		"---\nname: x\ndescription: d\n---\n",
		"\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\n",
		"---\nname: x\ndescription: a: b\n---\n",
		"---\nname: &a x\ndescription: *a\ntools: 'Agent(a,b), Read'\n---\n",
		"---\n[\n---\n",
		"---\na: &a [*a]\n---\n",
		"---\nhooks: {? [a]: b}\nname: x\ndescription: d\n---\n",
		"---\ntools: Agent((x)\n---\n",
		"no frontmatter",
		"---\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, _, err := Parse("fuzz.md", data, known)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Path != "fuzz.md" {
				t.Fatalf("error without file and line: %v", err)
			}
			return
		}
		if !NamePattern.MatchString(d.Name) || d.Description == "" {
			t.Fatalf("accepted an invalid definition: %+v", d)
		}
		if _, err := json.Marshal(struct{ A, B any }{d.MCPServers, d.Hooks}); err != nil {
			t.Fatalf("kept a value that is not JSON-compatible: %v", err)
		}
	})
}
