package hook

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// TestIfLimitsWhenAHookRuns: a .env guard with "if": "Write(.env*)" runs
// only for writes of .env files (before "if" was read, it blocked every
// Write), and a push guard with "if": "Bash(git push *)" only for pushes,
// wherever they stand in a compound command. Writes outside the settings'
// project, which even bypassPermissions leaves to a person, are not
// matches either.
func TestIfLimitsWhenAHookRuns(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "ran.log")
	guard := script(t, dir, "guard.sh", `cat >/dev/null; echo env >> `+log+`; echo "no writes to .env files" >&2; exit 2`)
	push := script(t, dir, "push.sh", `cat >/dev/null; echo push >> `+log+`; echo "push from CI only" >&2; exit 2`)
	r := newRunner(t, Config{},
		spec{event: PreToolUse, matcher: "Write|Edit", cmd: guard, cond: "Write(.env*)"},
		spec{event: PreToolUse, matcher: "Bash", cmd: push, cond: "Bash(git push *)"})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
	tests := []struct {
		tool, input string
		ran         int
	}{
		{"Write", `{"file_path": "` + filepath.Join(dir, ".env") + `", "content": "K=1"}`, 1},
		{"Write", `{"file_path": "` + filepath.Join(dir, "deploy", ".env.production") + `", "content": "K=1"}`, 1},
		{"Write", `{"file_path": ".env.local", "content": "K=1"}`, 1},
		{"Write", `{"file_path": "` + filepath.Join(dir, "notes.txt") + `", "content": "hi"}`, 0},
		{"Write", `{"file_path": "` + filepath.Join(dir, "env.md") + `", "content": "hi"}`, 0},
		{"Bash", `{"command": "git push origin main"}`, 1},
		{"Bash", `{"command": "make test && git push -f"}`, 1},
		{"Bash", `{"command": "git status"}`, 0},
		{"Bash", `{"command": "echo git push"}`, 0},
		// Whether a command may leave the sandbox is not the rule's
		// business: the flag neither makes nor stops a match.
		{"Bash", `{"command": "git status", "dangerouslyDisableSandbox": true}`, 0},
		{"Bash", `{"command": "git push", "dangerouslyDisableSandbox": true}`, 1},
	}
	for _, tt := range tests {
		in := toolInput(PreToolUse, call(dir, tt.tool, tt.input))
		o := s.Fire(t.Context(), in)
		if o.Ran != tt.ran || o.Block != (tt.ran > 0) {
			t.Errorf("%s %s: ran %d hooks, block %v; want %d", tt.tool, tt.input, o.Ran, o.Block, tt.ran)
		}
	}
	if got := strings.Fields(readFile(t, log)); len(got) != 6 {
		t.Errorf("the guards ran %d times (%v), want 6", len(got), got)
	}
}

// TestIfProblems: an "if" that cannot be read is reported with file, line
// and key, and the hook then runs for every call its matcher accepts
// (failing closed); an "if" on an event that is not about a tool call is
// reported and ignored.
func TestIfProblems(t *testing.T) {
	set, probs := loadSet("/proj/.claude/settings.json", []byte(`{"hooks": {
  "PreToolUse": [{"matcher": "Write", "hooks": [
    {"type": "command", "command": "guard", "if": "Write(.env*"},
    {"type": "command", "command": "other", "if": 7}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "stop", "if": "Bash(ls)"}]}]
}}`))
	var got []string
	for _, p := range probs {
		got = append(got, p.Error())
	}
	want := []string{
		`/proj/.claude/settings.json:3:51: hooks.PreToolUse[0].hooks[0].if: rule "Write(.env*": missing closing parenthesis; until it is fixed the hook runs for every call its matcher accepts`,
		`/proj/.claude/settings.json:4:51: hooks.PreToolUse[0].hooks[1].if: must be a permission rule as a string, such as "Write(.env*)", not a number; until it is fixed the hook runs for every call its matcher accepts`,
		`/proj/.claude/settings.json:5:68: hooks.Stop[0].hooks[0].if: applies to tool events only (PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest); it is ignored for Stop`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	in := Input{HookEventName: PreToolUse, ToolName: "Write", ToolInput: json.RawMessage(`{"file_path": "/proj/notes.txt", "content": ""}`), Cwd: "/proj"}
	if n := len(set.matching(&in, "/home")); n != 2 {
		t.Errorf("%d commands apply to a Write of notes.txt, want both (their conditions are unusable)", n)
	}
	if n := len(set.matching(&Input{HookEventName: Stop}, "/home")); n != 1 {
		t.Errorf("the Stop hook does not run")
	}
}
