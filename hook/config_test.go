package hook

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMatcher(t *testing.T) {
	names := []string{"Write", "Edit", "NotebookEdit", "Bash", "mcp__github__create_issue", "Writer"}
	tests := []struct {
		pattern string
		want    []string
	}{
		{"", names},
		{"*", names},
		{"Write", []string{"Write"}},
		{"Write|Edit", []string{"Write", "Edit"}},
		{"Write | Edit", []string{"Write", "Edit"}},
		{"mcp__.*", []string{"mcp__github__create_issue"}},
		{"mcp__github__.*", []string{"mcp__github__create_issue"}},
		{"Notebook.*", []string{"NotebookEdit"}},
		{"^(Write|Edit)$", []string{"Write", "Edit"}},
		{"Edit.*", []string{"Edit", "NotebookEdit"}}, // unanchored, as in Claude Code
		{"Bash(", names}, // does not compile: matches everything (fail closed)
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			m, err := compileMatcher(tt.pattern)
			if (err != nil) != (tt.pattern == "Bash(") {
				t.Fatalf("compile error = %v", err)
			}
			var got []string
			for _, n := range names {
				if m.match(n) {
					got = append(got, n)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatcherIgnoredForNonToolEvents(t *testing.T) {
	set, probs := loadSet("/p/settings.json", []byte(`{"hooks": {
		"Stop": [{"matcher": "Write", "hooks": [{"type": "command", "command": "a"}]}],
		"SubagentStart": [{"matcher": "Explore", "hooks": [{"type": "command", "command": "b"}]}]}}`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if got := len(set.matching(&Input{HookEventName: Stop}, "")); got != 1 {
		t.Errorf("Stop commands matching = %d, want 1 (matcher ignored)", got)
	}
	if got := len(set.matching(&Input{HookEventName: SubagentStart, AgentType: "Plan"}, "")); got != 0 {
		t.Errorf("SubagentStart matched agent type Plan against Explore")
	}
	if got := len(set.matching(&Input{HookEventName: SubagentStart, AgentType: "Explore"}, "")); got != 1 {
		t.Errorf("SubagentStart did not match agent type Explore")
	}
}

func TestParseLoadsCommands(t *testing.T) {
	data := `{
  "model": "x",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Write|Edit", "hooks": [
        {"type": "command", "command": "/bin/guard.sh", "timeout": 30},
        {"type": "command", "command": "echo second", "statusMessage": "ignored"}
      ]},
      {"hooks": [{"type": "command", "command": "echo all", "timeout": 0.5}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "stop.sh"}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "claude-only.sh"}]}]
  }
}`
	set, probs := loadSet("/proj/.cohort/settings.json", []byte(data))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	type row struct {
		Key, Matcher, Cmd string
		Timeout           time.Duration
		Line, Col         int
	}
	var got []row
	for _, ev := range Events {
		for _, c := range set.Commands(ev) {
			got = append(got, row{c.Key, c.Matcher, c.Cmd, c.Timeout, c.Line, c.Col})
		}
	}
	want := []row{
		{"hooks.PreToolUse[0].hooks[0]", "Write|Edit", "/bin/guard.sh", 30 * time.Second, 6, 9},
		{"hooks.PreToolUse[0].hooks[1]", "Write|Edit", "echo second", 0, 7, 9},
		{"hooks.PreToolUse[1].hooks[0]", "", "echo all", 500 * time.Millisecond, 9, 18},
		{"hooks.Stop[0].hooks[0]", "", "stop.sh", 0, 11, 25},
		{"hooks.SessionStart[0].hooks[0]", "", "claude-only.sh", 0, 12, 33},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if set.Len() != 5 {
		t.Errorf("Len = %d", set.Len())
	}
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name  string
		hooks string
		want  []string // "line:col key: message fragment"
		cmds  int
	}{
		{"not an object", `"hooks": ["a"]`,
			[]string{"1:11 hooks: must be an object mapping event names"}, 0},
		{"null is nothing", `"hooks": null`, nil, 0},
		{"unknown event with suggestion", `"hooks": {"PreToolUSe": []}`,
			[]string{`1:12 hooks.PreToolUSe: "PreToolUSe" is not a hook event Cohort fires (did you mean "PreToolUse"?)`}, 0},
		{"unknown event without suggestion", `"hooks": {"Whenever": []}`,
			[]string{`1:12 hooks.Whenever: "Whenever" is not a hook event Cohort fires; the events are PreToolUse, `}, 0},
		{"event not a list", `"hooks": {"Stop": {"hooks": []}}`,
			[]string{`1:20 hooks.Stop: must be an array of {"matcher": …, "hooks": […]} groups, not an object`}, 0},
		{"group not an object", `"hooks": {"Stop": ["x", {"hooks": [{"type": "command", "command": "ok"}]}]}`,
			[]string{`1:21 hooks.Stop[0]: must be an object`}, 1},
		{"matcher wrong type", `"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}`,
			[]string{`1:39 hooks.PreToolUse[0].matcher: must be a string`}, 0},
		{"bad regexp matches all", `"hooks": {"PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "g"}]}]}`,
			[]string{`1:27 hooks.PreToolUse[0].matcher: "Bash(" is not a valid regular expression`}, 1},
		{"missing hooks list", `"hooks": {"Stop": [{"matcher": ""}]}`,
			[]string{`1:21 hooks.Stop[0]: has no "hooks" list`}, 0},
		{"unknown group key", `"hooks": {"Stop": [{"hook": [], "hooks": [{"type": "command", "command": "ok"}]}]}`,
			[]string{`1:22 hooks.Stop[0].hook: unknown key`}, 1},
		{"hooks not a list", `"hooks": {"Stop": [{"hooks": "run.sh"}]}`,
			[]string{`1:31 hooks.Stop[0].hooks: must be an array`}, 0},
		{"entry not an object", `"hooks": {"Stop": [{"hooks": ["run.sh"]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0]: must be an object`}, 0},
		{"command missing", `"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].command: is missing or empty`}, 0},
		{"command wrong type", `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": ["a"]}]}]}`,
			[]string{`1:63 hooks.Stop[0].hooks[0].command: must be a string`}, 0},
		{"unsupported type skipped, others load", `"hooks": {"Stop": [{"hooks": [{"type": "mcp_tool", "server": "s", "tool": "t"}, {"type": "prompt", "prompt": "p"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].type: hook type "mcp_tool" is not supported (Cohort runs "command", "http", "prompt" and "agent" hooks); the hook is skipped`}, 1},
		{"type not a string", `"hooks": {"Stop": [{"hooks": [{"type": 7, "command": "x"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].type: hook type "(a number)" is not supported`}, 0},
		{"http without url", `"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].url: must be an http or https URL`}, 0},
		{"http url not http", `"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "file:///etc/passwd"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].url: must be an http or https URL to POST the event's input to, not "file:///etc/passwd"`}, 0},
		{"http headers wrong type", `"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://h/", "headers": ["a"]}]}]}`,
			[]string{`1:80 hooks.Stop[0].hooks[0].headers: must be an object of strings`}, 0},
		{"prompt without prompt", `"hooks": {"Stop": [{"hooks": [{"type": "agent", "prompt": " "}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].prompt: is missing or empty`}, 0},
		{"http and agent load", `"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "https://h/x", "allowedEnvVars": ["T"]}, {"type": "agent", "prompt": "check", "model": "haiku"}]}]}`,
			nil, 2},
		{"missing type still runs", `"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].type: is missing; add "type": "command"`}, 1},
		{"bad timeout uses default", `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}`,
			[]string{`1:79 hooks.Stop[0].hooks[0].timeout: must be more than 0`}, 1},
		{"timeout wrong type", `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}`,
			[]string{`1:79 hooks.Stop[0].hooks[0].timeout: must be a number of seconds, not a string`}, 1},
		{"one broken entry, others load", `"hooks": {"Stop": [{"hooks": [{"type": "command"}, {"type": "command", "command": "y"}]}]}`,
			[]string{`1:32 hooks.Stop[0].hooks[0].command: is missing or empty`}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join("/proj", ".cohort", "settings.json")
			set, probs := loadSet(path, []byte("{"+tt.hooks+"}"))
			var got []string
			for _, p := range probs {
				if p.Path != path {
					t.Errorf("problem names %q, want %q", p.Path, path)
				}
				got = append(got, fmt.Sprintf("%d:%d %s: %s", p.Line, p.Col, p.Key, p.Msg))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got[i], tt.want[i])
				}
			}
			if set.Len() != tt.cmds {
				t.Errorf("%d commands loaded, want %d", set.Len(), tt.cmds)
			}
		})
	}
}

func TestProblemsAcrossLinesAndFiles(t *testing.T) {
	data := "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Write\", \"hooks\": [\n        {\"type\": \"command\"}\n      ]}\n    ]\n  }\n}\n"
	_, probs := loadSet("/home/u/.cohort/settings.json", []byte(data))
	if len(probs) != 1 {
		t.Fatalf("problems: %v", probs)
	}
	want := "/home/u/.cohort/settings.json:5:9: hooks.PreToolUse[0].hooks[0].command: is missing or empty; give the shell command to run (the hook is skipped)"
	if got := probs[0].Error(); got != want {
		t.Errorf("problem\n got %s\nwant %s", got, want)
	}
}

func TestFromDefinition(t *testing.T) {
	// The shape agent.Definition.Hooks has after YAML decoding.
	hooks := map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{
			map[string]any{"type": "command", "command": "check-bash", "timeout": 5},
		}}},
		"Stop":   []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "final-check"}}}},
		"Bogus":  []any{},
		"Finish": "x",
	}
	set, probs := FromDefinition("/proj/.cohort/agents/reviewer.md", hooks)
	var got []string
	for _, p := range probs {
		got = append(got, p.Error())
	}
	want := []string{
		`/proj/.cohort/agents/reviewer.md: hooks.Bogus: "Bogus" is not a hook event Cohort fires; the events are PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStart, SubagentStop, TeammateIdle, TaskCompleted, WorktreeCreate, WorktreeRemove, SessionStart, SessionEnd, Notification, PreCompact, PermissionRequest, PostToolBatch, StopFailure, TaskCreated, PostCompact, Interrupt, CwdChanged, InstructionsLoaded, PreModelSwitch, PostModelSwitch, UserPromptExpansion; these hooks never run`,
		`/proj/.cohort/agents/reviewer.md: hooks.Finish: "Finish" is not a hook event Cohort fires; the events are PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStart, SubagentStop, TeammateIdle, TaskCompleted, WorktreeCreate, WorktreeRemove, SessionStart, SessionEnd, Notification, PreCompact, PermissionRequest, PostToolBatch, StopFailure, TaskCreated, PostCompact, Interrupt, CwdChanged, InstructionsLoaded, PreModelSwitch, PostModelSwitch, UserPromptExpansion; these hooks never run`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if c := set.Commands(PreToolUse); len(c) != 1 || c[0].Cmd != "check-bash" || c[0].Timeout != 5*time.Second || c[0].Line != 0 {
		t.Errorf("PreToolUse commands = %+v", c)
	}
	// As a subagent, the definition's Stop hooks fire on SubagentStop.
	sub := set.asSubagent()
	if len(sub.Commands(Stop)) != 0 || len(sub.Commands(SubagentStop)) != 1 || sub.Commands(SubagentStop)[0].Event != SubagentStop {
		t.Errorf("asSubagent: Stop %v, SubagentStop %v", sub.Commands(Stop), sub.Commands(SubagentStop))
	}
	if len(set.Commands(Stop)) != 1 {
		t.Errorf("asSubagent changed the original set")
	}
}

func TestDuplicateCommandsRunOnce(t *testing.T) {
	set := Merge(
		mustSet(t, `{"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "same"}]}]}}`),
		mustSet(t, `{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "same"}, {"type": "command", "command": "other"}]}]}}`),
	)
	var got []string
	for _, c := range set.matching(&Input{HookEventName: PreToolUse, ToolName: "Write"}, "") {
		got = append(got, c.Cmd)
	}
	if diff := cmp.Diff([]string{"same", "other"}, got); diff != "" {
		t.Errorf("matching (-want +got):\n%s", diff)
	}
}

func mustSet(t *testing.T, data string) *Set {
	t.Helper()
	set, probs := loadSet("/x/settings.json", []byte(data))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return set
}
