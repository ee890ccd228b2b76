package trial

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/bench/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun builds the real binaries and runs a small workload three ways:
// as it should go, with Bash denied (the check fails, the run does not),
// and with a bad flag (cohort fails: an error).
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/cohort and fakeserve")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bins, err := Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer bins.Remove()
	spec := scenario.Spec{Agents: 2, Turns: 3, Tools: scenario.ToolsMixed, Background: true}
	cfg := Config{Cohort: bins.Cohort, FakeServe: bins.FakeServe, Spec: spec, Timeout: time.Minute}

	t.Run("ok", func(t *testing.T) {
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check != nil {
			t.Fatal(res.Check)
		}
		if res.Wall <= 0 || res.MaxRSS < 1<<20 || res.CPU <= 0 || res.FakeCPU <= 0 {
			t.Fatalf("measurements look empty: %+v", res)
		}
		if res.Summary.SubRequests != 8 || res.Summary.Notified != 2 {
			t.Fatalf("summary = %+v", res.Summary)
		}
	})
	t.Run("denied", func(t *testing.T) {
		c := cfg
		c.Args = []string{"--disallowedTools", "Bash"}
		res, err := Run(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if res.Check == nil || !strings.Contains(res.Check.Error(), "tool errors") {
			t.Fatalf("Check = %v; want the denied Bash calls reported", res.Check)
		}
	})
	t.Run("bad flag", func(t *testing.T) {
		c := cfg
		c.Args = []string{"--no-such-flag"}
		if _, err := Run(ctx, c); err == nil || !strings.Contains(err.Error(), "exit 2") {
			t.Fatalf("err = %v; want cohort's usage failure", err)
		}
	})
}

func TestCheckResult(t *testing.T) {
	for _, tc := range []struct {
		name, stdout string
		code         int
		want         string // substring of the error; "" for none
		turns        int
	}{
		{"success", "noise\n{\"type\":\"result\",\"is_error\":false,\"num_turns\":3}\n", 0, "", 3},
		{"error result", `{"is_error":true,"result":"boom"}`, 1, "boom", 0},
		{"not json", "panic: oops", 2, "not a JSON result", 0},
		{"exit code", `{"is_error":false}`, 1, "exit 1", 0},
	} {
		turns, err := CheckResult([]byte(tc.stdout), nil, tc.code)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v; want %q", tc.name, err, tc.want)
		case tc.want == "" && turns != tc.turns:
			t.Errorf("%s: turns = %d, want %d", tc.name, turns, tc.turns)
		}
	}
}

func TestNewWorkspaceRejectsABadSpec(t *testing.T) {
	if _, err := NewWorkspace(scenario.Spec{Agents: 0, Tools: scenario.ToolsBash}); err == nil {
		t.Fatal("a spec with no agents was accepted")
	}
}

// Workspaces put in a Trash stay until Empty, then are all gone.
func TestTrashKeepsWorkspacesUntilEmpty(t *testing.T) {
	var trash Trash
	var dirs []string
	for range 2 {
		w, err := NewWorkspace(scenario.Spec{Agents: 1, Turns: 1, Tools: scenario.ToolsMixed})
		if err != nil {
			t.Fatal(err)
		}
		discard(w, &trash)
		dirs = append(dirs, w.Dir)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("workspace %s gone before Empty: %v", d, err)
		}
	}
	trash.Empty()
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("workspace %s still there after Empty: %v", d, err)
		}
	}
	w, err := NewWorkspace(scenario.Spec{Agents: 1, Turns: 1, Tools: scenario.ToolsMixed})
	if err != nil {
		t.Fatal(err)
	}
	discard(w, nil)
	if _, err := os.Stat(w.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("without a Trash the workspace is not deleted at once")
	}
}

// TestDropFromPageCache drops a file that exists, leaves its bytes as
// they were, and names a file it cannot open.
func TestDropFromPageCache(t *testing.T) {
	f := t.TempDir() + "/bin"
	if err := os.WriteFile(f, []byte("cohort"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := DropFromPageCache(f); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(f); err != nil || string(b) != "cohort" {
		t.Fatalf("after the drop the file reads %q, %v", b, err)
	}
	if err := DropFromPageCache(f + ".missing"); err == nil || !strings.Contains(err.Error(), "bin.missing") {
		t.Fatalf("a missing file: %v", err)
	}
}
