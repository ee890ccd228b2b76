package sandbox

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/proc"
)

// TestLauncherThatCannotStartFailsClosed: a session hands its Sandbox out
// before the launcher has started (internal/assemble's openSandbox), so a
// launcher that cannot start must leave every later use failing, never a
// command run some other way: Report, then each Launcher after it, in
// either profile, gets the start's error.
func TestLauncherThatCannotStartFailsClosed(t *testing.T) {
	if !proc.GroupSignals() {
		t.Skip("no pidfd process-group signals: the sandbox cannot start here at all")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := New(Config{Home: root, TempRoot: root, Executable: filepath.Join(root, "no-such-cohort")})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if _, err := sb.Report(t.Context(), root); err == nil {
		t.Fatal("Report: a launcher that cannot be executed started")
	}
	for _, prof := range []Profile{Writing, ReadOnly, Writing} {
		l, err := sb.Launcher(t.Context(), root, prof)
		if err == nil || l != nil {
			t.Fatalf("Launcher(%v) after a failed start: %v, %v; want the start's error", prof, l, err)
		}
		if !strings.Contains(err.Error(), "no-such-cohort") {
			t.Fatalf("Launcher(%v): %v; want the start's error, naming the binary", prof, err)
		}
	}
}
