package safegit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/sandbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// project is a repository with one commit and a file changed since.
func project(t *testing.T) (string, gitrepo.Layout) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	top := filepath.Join(root, "p")
	os.MkdirAll(top, 0o755)
	os.WriteFile(filepath.Join(top, "a.txt"), []byte("a\n"), 0o644)
	git(t, top, "init", "-q", "-b", "main")
	git(t, top, "add", ".")
	git(t, top, "commit", "-qm", "one")
	os.WriteFile(filepath.Join(top, "a.txt"), []byte("changed\n"), 0o644)
	l, err := gitrepo.Read(top)
	if err != nil {
		t.Fatal(err)
	}
	return top, l
}

func gone(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("%s exists: git ran a program the repository named", marker)
	}
}

// A repository's config names programs git runs on a plain status:
// fsmonitor, and a clean filter (defined in a file the config includes,
// which lies in the working tree, with .gitattributes choosing it). None
// runs through the Runner; plain git, the control, runs both.
func TestRepositoryProgramsDoNotRun(t *testing.T) {
	top, l := project(t)
	fsm, filt := filepath.Join(top, "..", "fsmonitor-ran"), filepath.Join(top, "..", "filter-ran")
	os.WriteFile(filepath.Join(top, "inc.cfg"), []byte("[filter \"evil\"]\n\tclean = \"touch "+filt+" && cat\"\n"), 0o644)
	os.WriteFile(filepath.Join(top, ".gitattributes"), []byte("*.txt filter=evil\n"), 0o644)
	git(t, top, "config", "core.fsmonitor", "touch "+fsm)
	git(t, top, "config", "include.path", "../inc.cfg")
	r := &Runner{}
	out, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"status", "--porcelain"}})
	if err != nil || !strings.Contains(out, "a.txt") {
		t.Fatalf("status: %q %v", out, err)
	}
	if out, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"diff", "--stat"}}); err != nil || !strings.Contains(out, "a.txt") {
		t.Fatalf("diff: %q %v", out, err)
	}
	gone(t, fsm)
	gone(t, filt)
	git(t, top, "status", "--porcelain")
	git(t, top, "diff", "--stat")
	for _, m := range []string{fsm, filt} {
		if _, err := os.Stat(m); err != nil {
			t.Errorf("control: plain git should run %s", m)
		}
	}
}

// The repository is named to git: a .git file rewritten after Cohort read
// the layout (to a fake git dir whose config runs a program) sends the
// Runner nowhere, and neither do GIT_DIR or GIT_EXEC_PATH in Cohort's own
// environment.
func TestRepositoryIsNamedNotDiscovered(t *testing.T) {
	top, _ := project(t)
	wt := filepath.Join(top, "wt")
	git(t, top, "worktree", "add", "-q", "-b", "w", wt)
	l, err := gitrepo.Read(wt)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(top, "..", "fake-ran")
	fake := filepath.Join(top, "..", "fake")
	os.MkdirAll(filepath.Join(fake, "objects"), 0o755)
	os.MkdirAll(filepath.Join(fake, "refs"), 0o755)
	os.WriteFile(filepath.Join(fake, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(fake, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch "+marker+"\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+fake+"\n"), 0o644)
	r := &Runner{Env: append(os.Environ(), "GIT_DIR="+fake, "GIT_EXEC_PATH="+fake)}
	out, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"rev-parse", "--git-dir", "--abbrev-ref", "HEAD"}})
	if err != nil || !strings.Contains(out, filepath.Join(top, ".git", "worktrees", "wt")) || !strings.Contains(out, "w\n") {
		t.Errorf("rev-parse through the Runner: %q %v", out, err)
	}
	if _, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"status", "--porcelain"}}); err != nil {
		t.Errorf("status: %v", err)
	}
	gone(t, marker)
}

// Through a sandbox, a call that names no directory to write writes
// nothing, and one that names the repository commits there.
func TestSandboxedCalls(t *testing.T) {
	top, l := project(t)
	root := filepath.Dir(top)
	sb, err := sandbox.New(sandbox.Config{Home: root, TempRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	r := &Runner{Env: append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x"),
		Sandbox: func(ctx context.Context, writable []string) (proc.Launcher, error) { return sb.Helper(ctx, writable) }}
	if _, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"commit", "-qam", "read-only"}}); err == nil || !strings.Contains(err.Error(), "index.lock") {
		t.Errorf("a read-only call committed: %v", err)
	}
	if _, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"commit", "-qam", "allowed"}, Write: []string{l.WorkTree}}); err != nil {
		t.Errorf("a call allowed to write the repository: %v", err)
	}
	if log := git(t, top, "log", "--oneline"); !strings.Contains(log, "allowed") || strings.Contains(log, "read-only") {
		t.Errorf("log: %s", log)
	}
}
