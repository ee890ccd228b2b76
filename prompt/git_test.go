package prompt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// TestGitSnapshotLeavesOutHiddenPaths: files the sandbox hides (here
// removed from the working tree, as a hidden file looks to git) are not
// named in the snapshot's status, while other changes are; a status of
// hidden paths only reads as clean.
func TestGitSnapshotLeavesOutHiddenPaths(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "--quiet", "--initial-branch=main")
	write("secrets/name-of-the-key", "k")
	write("a.txt", "a")
	git("add", ".")
	git("commit", "--quiet", "-m", "start")
	if err := os.Remove(filepath.Join(dir, "secrets", "name-of-the-key")); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := &safegit.Runner{Env: env}
	hidden := func(p string) bool { return strings.HasPrefix(p, filepath.Join(dir, "secrets")+"/") }
	if got := GitSnapshot(t.Context(), g, repo, dir, nil); !strings.Contains(got, "secrets/name-of-the-key") {
		t.Fatalf("without a filter the deleted file is listed (the test's premise):\n%s", got)
	}
	got := GitSnapshot(t.Context(), g, repo, dir, hidden)
	if strings.Contains(got, "name-of-the-key") || !strings.Contains(got, "(clean)") {
		t.Errorf("a hidden path is named, or the status is not clean:\n%s", got)
	}
	write("a.txt", "changed")
	if got := GitSnapshot(t.Context(), g, repo, dir, hidden); strings.Contains(got, "name-of-the-key") || !strings.Contains(got, " M a.txt") {
		t.Errorf("want a.txt listed and the hidden path not:\n%s", got)
	}
}

// TestGitSnapshotBranch: the branch comes from status's header line as
// `git branch --show-current` would print it, for a branch with an
// upstream, an unborn branch, a detached HEAD and a name with a slash;
// and a status line starting with a space keeps it.
func TestGitSnapshotBranch(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	g := &safegit.Runner{Env: env}
	snap := func() string {
		repo, err := gitrepo.Find(dir)
		if err != nil {
			t.Fatal(err)
		}
		return GitSnapshot(t.Context(), g, repo, dir, nil)
	}
	want := func(branch, status string) {
		t.Helper()
		got := snap()
		if !strings.Contains(got, "Current branch: "+branch+"\n\nStatus:\n"+status+"\n") {
			t.Errorf("want branch %q and status %q (as git branch --show-current: %q):\n%s", branch, status, git("branch", "--show-current"), got)
		}
	}
	git("init", "--quiet", "--initial-branch=feature/x")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	want("feature/x", "?? a.txt") // unborn
	git("add", ".")
	git("commit", "--quiet", "-m", "start")
	want("feature/x", "(clean)")
	git("branch", "base")
	git("branch", "--set-upstream-to=base")
	git("commit", "--quiet", "--allow-empty", "-m", "ahead")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	want("feature/x", " M a.txt") // "## feature/x...base [ahead 1]"
	git("checkout", "--quiet", "--detach")
	want("(detached HEAD)", " M a.txt")
}

func TestBranchHeader(t *testing.T) {
	for _, c := range []struct{ in, branch, status string }{
		{"## main", "main", ""},
		{"## main...origin/main [ahead 1, behind 2]\n M a", "main", " M a"},
		{"## No commits yet on dev\n?? a", "dev", "?? a"},
		{"## Initial commit on dev", "dev", ""},
		{"## HEAD (no branch)\n M a", "", " M a"},
		{" M a", "", " M a"},
	} {
		if b, s := branchHeader(c.in); b != c.branch || s != c.status {
			t.Errorf("branchHeader(%q) = %q, %q; want %q, %q", c.in, b, s, c.branch, c.status)
		}
	}
}
