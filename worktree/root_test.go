package worktree

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRepoRoot(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	wt, err := m.Create(t.Context(), "deep/agent", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	userWT := filepath.Join(canonical(t.TempDir()), "user")
	r.git("worktree", "add", "--quiet", "-b", "user", userWT)

	g, err := newGitRunner(t.Context(), "", r.env, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{r.dir, filepath.Join(r.dir, "src"), filepath.Join(wt.Path, "docs"), userWT, filepath.Join(r.dir, ".git")} {
		main, err := mainWorktree(t.Context(), g, dir)
		if err != nil || main.Path != r.dir {
			t.Errorf("root of %s = %q, %v; want %s", dir, main.Path, err, r.dir)
		}
		// A Manager made from inside a worktree puts new ones at the root,
		// never nested.
		if got := r.manager(Config{Dir: dir}).worktreesRoot(); got != filepath.Join(r.dir, ".cohort", "worktrees") {
			t.Errorf("worktrees of a manager in %s go to %s", dir, got)
		}
	}
	// The exported function uses the process's git and environment.
	if got, err := RepoRoot(t.Context(), filepath.Join(wt.Path, "src")); err != nil || got != r.dir {
		t.Errorf("RepoRoot = %q, %v; want %s", got, err, r.dir)
	}
	if got := ProjectSlug(r.dir); got == "" || filepath.Base(got) != got {
		t.Errorf("ProjectSlug(%s) = %q is not a single path element", r.dir, got)
	}
}

func TestRepoRootOfBareRepository(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	bare := filepath.Join(canonical(t.TempDir()), "repo.git")
	r.git("clone", "--quiet", "--bare", r.dir, bare)
	linked := filepath.Join(canonical(t.TempDir()), "linked")
	r.gitIn(bare, "worktree", "add", "--quiet", linked, "main")
	g, err := newGitRunner(t.Context(), "", r.env, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	main, err := mainWorktree(t.Context(), g, linked)
	if err != nil || main.Path != bare || !main.Bare {
		t.Errorf("root = %+v, %v; want the bare repository %s", main, err, bare)
	}
}

func TestParseWorktreeList(t *testing.T) {
	t.Parallel()
	out := "worktree /no/such/main\nHEAD 1111\nbranch refs/heads/main\n\n" +
		"worktree /no/such/wt\nHEAD 2222\ndetached\nlocked cohort pid=1\nprunable gitdir file points to non-existent location\n\n" +
		"worktree /no/such/bare.git\nbare\n\n"
	want := []listEntry{
		{Path: "/no/such/main", Head: "1111", Branch: "main"},
		{Path: "/no/such/wt", Head: "2222", Detached: true, Locked: true, Prunable: true},
		{Path: "/no/such/bare.git", Bare: true},
	}
	if diff := cmp.Diff(want, parseWorktreeList(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
