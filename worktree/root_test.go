package worktree

import (
	"os"
	"path/filepath"
	"strings"
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

	for _, dir := range []string{r.dir, filepath.Join(r.dir, "src"), filepath.Join(wt.Path, "docs"), userWT, filepath.Join(r.dir, ".git")} {
		loc, err := locate(dir)
		if err != nil || loc.root != r.dir || loc.common != filepath.Join(r.dir, ".git") {
			t.Errorf("location of %s = %+v, %v; want root %s", dir, loc, err, r.dir)
		}
		// A Manager made from inside a worktree puts new ones at the root,
		// never nested.
		if got := r.manager(Config{Dir: dir}).worktreesRoot(); got != filepath.Join(r.dir, ".cohort", "worktrees") {
			t.Errorf("worktrees of a manager in %s go to %s", dir, got)
		}
	}
	// The exported function reads the same from the file system.
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
	for _, dir := range []string{linked, bare} {
		loc, err := locate(dir)
		if err != nil || loc.root != bare || loc.common != bare {
			t.Errorf("location of %s = %+v, %v; want the bare repository %s", dir, loc, err, bare)
		}
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

func TestSeparateGitDir(t *testing.T) {
	t.Parallel()
	gitDir := filepath.Join(canonical(t.TempDir()), "repo.git")
	r := &testRepo{t: t, dir: canonical(t.TempDir()), env: hermeticEnv(t)}
	r.git("init", "--quiet", "--separate-git-dir="+gitDir)
	r.write("a.txt", "a\n")
	r.git("add", ".")
	r.git("commit", "--quiet", "-m", "a")
	m := r.manager(Config{})
	if m.Root() != r.dir || m.common != gitDir {
		t.Errorf("root %s, git dir %s; want %s and %s", m.Root(), m.common, r.dir, gitDir)
	}
	wt, err := m.Create(t.Context(), "sep", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	// git keeps no record of where the main checkout of such a repository
	// is, so from a linked worktree it cannot be found: a clear error.
	if _, err := New(t.Context(), Config{Dir: wt.Path, Env: r.env}); err == nil || !strings.Contains(err.Error(), "start Cohort in the main checkout") {
		t.Errorf("New from a linked worktree of a --separate-git-dir repository = %v", err)
	}
	if out, err := m.Finish(t.Context(), wt); err != nil || out.Kept {
		t.Errorf("Finish = %+v, %v", out, err)
	}
	if got := r.branches(); len(got) != 0 {
		t.Errorf("branches left: %v", got)
	}
}

func TestSubmodule(t *testing.T) {
	t.Parallel()
	lib := newRepo(t)
	super := newRepo(t)
	super.git("-c", "protocol.file.allow=always", "submodule", "add", "--quiet", lib.dir, "lib")
	super.git("commit", "--quiet", "-m", "add lib")
	sub := filepath.Join(super.dir, "lib")
	m := super.manager(Config{Dir: sub})
	if m.Root() != sub || m.common != filepath.Join(super.dir, ".git", "modules", "lib") {
		t.Fatalf("root %s, git dir %s; want the submodule's", m.Root(), m.common)
	}
	wt, err := m.Create(t.Context(), "in-sub", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(wt.Path, filepath.Join(sub, ".cohort", "worktrees")+string(filepath.Separator)) {
		t.Errorf("worktree at %s, want it under the submodule's checkout", wt.Path)
	}
	// From inside that worktree the root is still the submodule checkout.
	if got := super.manager(Config{Dir: wt.Path}).Root(); got != sub {
		t.Errorf("root from the submodule's worktree = %s, want %s", got, sub)
	}
	if out, err := m.Finish(t.Context(), wt); err != nil || out.Kept {
		t.Errorf("Finish = %+v, %v", out, err)
	}
}

func TestMayBeRepositoryLooksForDotGitUpwards(t *testing.T) {
	root := canonical(t.TempDir())
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if MayBeRepository(deep) {
		t.Skipf("a parent of %s holds a .git entry; the negative case cannot be checked here", root)
	}
	if err := os.Mkdir(filepath.Join(root, "a", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !MayBeRepository(deep) {
		t.Error("a .git two levels up was not seen")
	}
	// A worktree's .git is a file.
	wt := filepath.Join(root, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !MayBeRepository(wt) {
		t.Error("a .git file was not seen")
	}
}
