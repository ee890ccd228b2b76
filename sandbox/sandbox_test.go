package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is one sandboxed session: a project, a place outside it, a home.
type env struct {
	t       *testing.T
	sb      *Sandbox
	project string
	outside string
	home    string
	profile Profile // of the commands bash runs; newEnv makes it Writing
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, project: filepath.Join(root, "project"), outside: filepath.Join(root, "outside"), home: filepath.Join(root, "home"), profile: Writing}
	for _, d := range []string{e.project, e.outside, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Home == "" {
		cfg.Home = e.home
	}
	if cfg.TempRoot == "" {
		cfg.TempRoot = root
	}
	sb, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	e.sb = sb
	return e
}

// bash runs a command line in the sandbox with cwd as the agent's
// directory and returns its output and exit code.
func (e *env) bash(cwd, line string) (string, int) {
	e.t.Helper()
	l, err := e.sb.Launcher(e.t.Context(), cwd, e.profile)
	if err != nil {
		e.t.Fatalf("Launcher: %v", err)
	}
	res, err := proc.Output(e.t.Context(), proc.Command{Path: "/bin/bash", Args: []string{"-c", line}, Dir: cwd,
		Env: append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}, e.sb.Env()...), Timeout: 30 * time.Second,
		NewSession: true, Launcher: l}, 1<<20)
	if err != nil {
		e.t.Fatalf("run %q: %v", line, err)
	}
	return res.Output, res.Code
}

func TestWritesOnlyInWritableDirs(t *testing.T) {
	e := newEnv(t, Config{})
	out, code := e.bash(e.project, `touch inside; touch `+e.outside+`/x 2>&1; echo tmp > "$TMPDIR/t" && echo code=$?`)
	if code != 0 || !strings.Contains(out, "code=0") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(e.project, "inside")); err != nil {
		t.Errorf("a write inside the project failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(e.outside, "x")); err == nil {
		t.Errorf("a write outside the project succeeded:\n%s", out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("output %q, want Permission denied", out)
	}
}
