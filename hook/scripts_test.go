package hook

import (
	"os"
	"path/filepath"
	"slices"
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

// python -m pkg.mod runs pkg/mod.py from the working directory when it
// is there: its file and its package's __init__.py are protected, and a
// module that is not a project file is not reported missing.
func TestScriptsOfAModuleRun(t *testing.T) {
	p := t.TempDir()
	if err := os.MkdirAll(filepath.Join(p, "tools4"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"__init__.py", "srv.py"} {
		if err := os.WriteFile(filepath.Join(p, "tools4", f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := ScriptsOf(CommandLine("python3", "-u", "-m", "tools4.srv", "--port", "1"), p, p)
	for _, want := range []string{filepath.Join(p, "tools4", "srv.py"), filepath.Join(p, "tools4", "__init__.py")} {
		if !slices.Contains(got, want) {
			t.Errorf("ScriptsOf(python3 -m tools4.srv) = %v, lacks %s", got, want)
		}
	}
	set, probs := loadSet("/p/.cohort/settings.json", settingsJSON(t, spec{event: Stop, cmd: "python3 -m pytest -q"}))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	if missing := set.MissingScripts(t.TempDir(), t.TempDir()); len(missing) != 0 {
		t.Errorf("python3 -m pytest reported missing: %v", missing)
	}
}
