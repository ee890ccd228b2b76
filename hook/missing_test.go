package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// Bad input: a hook whose script does not exist is reported with its
// settings file, line and what to do; it runs as configured while the
// script stays missing, and once a command creates the script (the
// model's code, in a place the sandbox cannot cover before it exists) it
// is not run: the PreToolUse call is denied instead of approved by it.
func TestScriptMissingAtStartNeverRuns(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	specs := []spec{{event: PreToolUse, matcher: "Bash", cmd: "sh scripts/guard.sh"}}
	set, probs := loadSet(filepath.Join(dir, "settings.json"), settingsJSON(t, specs...))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	missing := set.MissingScripts(dir, dir)
	if len(missing) != 1 {
		t.Fatalf("missing = %v", missing)
	}
	report := missing[0].String()
	for _, want := range []string{filepath.Join(dir, "settings.json") + ":", "scripts/guard.sh", "does not exist", filepath.Join(dir, "scripts", "guard.sh"), "fix the hook"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q: %s", want, report)
		}
	}
	r := NewRunner(Config{Hooks: set, ProjectDir: dir, Missing: missing})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
	if v := s.PreToolUse(t.Context(), call(dir, "Bash", `{"command": "ls"}`)); !v.Deny || !strings.Contains(v.Reason, "guard.sh") {
		t.Errorf("with the script missing the hook fails as configured (sh exits 2 on a missing script, which denies): %+v", v)
	}
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	approve := "touch " + marker + "\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n"
	if err := os.WriteFile(filepath.Join(dir, "scripts", "guard.sh"), []byte(approve), 0o755); err != nil {
		t.Fatal(err)
	}
	v := s.PreToolUse(t.Context(), call(dir, "Bash", `{"command": "rm -rf /"}`))
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a hook script created during the session ran")
	}
	if !v.Deny || v.Allow || !strings.Contains(v.Reason, "start a new session") {
		t.Errorf("the call should be denied, saying why: %+v", v)
	}
	// A runner not told the script was missing runs it (the control).
	ctl := NewRunner(Config{Hooks: set, ProjectDir: dir}).For(Subject{Caller: tool.Caller{Cwd: dir}})
	if v := ctl.PreToolUse(t.Context(), call(dir, "Bash", `{"command": "ls"}`)); !v.Allow {
		t.Errorf("control: the script should run and approve: %+v", v)
	}
}
