package hook

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScripts(t *testing.T) {
	proj, cwd := "/proj", "/proj/sub"
	set, probs := loadSet("/proj/.cohort/settings.json", settingsJSON(t,
		spec{event: PreToolUse, matcher: "Write", cmd: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh --strict`},
		spec{event: PostToolUse, matcher: "*", cmd: "python3 -u hooks/fmt.py"},
		spec{event: Stop, cmd: "/usr/local/bin/notify-done && echo ok"},
		spec{event: UserPromptSubmit, cmd: "echo plain"},
		// Inline programs and modules name no file (a settings file of the
		// conformance corpus runs python -m pytest and python -m unittest).
		spec{event: PostToolUse, matcher: "Write", cmd: `python -m pytest "$F" -v; python3 -c 'print(1)'; node -e 'x'; bash -c 'true'`},
	))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	want := []string{"/proj/.claude/hooks/check.sh", "/proj/hooks/fmt.py", "/proj/sub/hooks/fmt.py", "/usr/local/bin/notify-done"}
	got := set.Scripts(proj, cwd)
	for i := range got {
		got[i] = filepath.ToSlash(got[i])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scripts (-want +got):\n%s", diff)
	}
}
