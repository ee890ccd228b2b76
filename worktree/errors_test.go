package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNotARepository(t *testing.T) {
	t.Parallel()
	_, err := New(t.Context(), Config{Dir: t.TempDir(), Env: hermeticEnv(t)})
	if !errors.Is(err, ErrNotRepository) || !strings.Contains(err.Error(), "cannot be isolated") {
		t.Errorf("New outside a repository = %v; want ErrNotRepository explaining isolation is impossible", err)
	}
	if _, err := New(t.Context(), Config{Dir: filepath.Join(t.TempDir(), "missing"), Env: hermeticEnv(t)}); err == nil {
		t.Error("New on a missing directory succeeded")
	}
}

func TestGitMissing(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	empty := t.TempDir()
	env := append(append([]string{}, r.env...), "PATH="+empty) // the last PATH wins
	_, err := New(t.Context(), Config{Dir: r.dir, Env: env})
	if !errors.Is(err, ErrGitNotFound) || !strings.Contains(err.Error(), empty) {
		t.Errorf("New without git on PATH = %v; want ErrGitNotFound naming the PATH", err)
	}
	_, err = New(t.Context(), Config{Dir: r.dir, Env: r.env, Git: filepath.Join(empty, "git")})
	if !errors.Is(err, ErrGitNotFound) {
		t.Errorf("New with a missing git path = %v; want ErrGitNotFound", err)
	}
}

func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	if _, err := m.Create(t.Context(), "a", Owner{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		slug string
		is   error
	}{
		{"a", ErrExists},
		{"a/b", ErrExists}, // would nest inside worktree "a"
		{"../../x", ErrInvalidSlug},
		{"a/../../b", ErrInvalidSlug},
		{"x.lock", ErrInvalidSlug},
	}
	for _, tt := range tests {
		if _, err := m.Create(t.Context(), tt.slug, Owner{}); !errors.Is(err, tt.is) {
			t.Errorf("Create(%q) = %v, want %v", tt.slug, err, tt.is)
		}
	}
	// A branch left by a worktree the user deleted by hand blocks its slug.
	r.git("branch", "cohort/taken")
	if _, err := m.Create(t.Context(), "taken", Owner{}); !errors.Is(err, ErrExists) {
		t.Errorf("Create over an existing branch = %v, want ErrExists", err)
	}
	// "p/q" exists as a branch, so "p" cannot be one: git's own refusal.
	r.git("branch", "cohort/p/q")
	if _, err := m.Create(t.Context(), "p", Owner{}); !errors.Is(err, ErrExists) {
		t.Errorf("Create of a branch that is a prefix of another = %v, want ErrExists", err)
	}
	want := []string{"cohort/a", "cohort/p/q", "cohort/taken"}
	if got := r.branches(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("refused creations left branches: %v", got)
	}
	if got := len(r.worktrees()); got != 2 {
		t.Errorf("refused creations left worktrees: %v", r.worktrees())
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	for _, cfg := range []Config{
		{Base: "--upload-pack=evil"},
		{Symlinks: []string{"/abs"}},
		{Symlinks: []string{"../up"}},
		{Symlinks: []string{""}},
		{Sparse: []string{".git"}},
		{Sparse: []string{"a/../../b"}},
	} {
		cfg.Dir, cfg.Env = r.dir, r.env
		if _, err := New(t.Context(), cfg); err == nil {
			t.Errorf("New(%+v) accepted a bad setting", cfg)
		}
	}
	m := r.manager(Config{Base: "no-such-branch"})
	if _, err := m.Create(t.Context(), "x", Owner{}); err == nil || !strings.Contains(err.Error(), "no-such-branch") {
		t.Errorf("Create from a missing base = %v; want an error naming it", err)
	}
}

func TestEmptyRepository(t *testing.T) {
	t.Parallel()
	r := &testRepo{t: t, dir: canonical(t.TempDir()), env: hermeticEnv(t)}
	r.git("init", "--quiet")
	m := r.manager(Config{})
	if _, err := m.Create(t.Context(), "x", Owner{}); err == nil || !strings.Contains(err.Error(), "commit something first") {
		t.Errorf("Create in a repository without commits = %v", err)
	}
}

func TestConfiguredBase(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	first := r.git("rev-parse", "HEAD")
	r.write("later.txt", "later\n")
	r.git("add", ".")
	r.git("commit", "--quiet", "-m", "later")
	m := r.manager(Config{Base: first})
	wt, err := m.Create(t.Context(), "old-base", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	if wt.BaseCommit != first || exists(filepath.Join(wt.Path, "later.txt")) {
		t.Errorf("worktree based on %s, want %s", wt.BaseCommit, first)
	}
}

// Cohort's own git calls never run the repository's hooks (issue 36:
// they are programs a model may have written; the RunHooks option that
// let them run is gone).
func TestHooksNeverRun(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	marker := filepath.Join(t.TempDir(), "hook-ran")
	hook := "#!/bin/sh\ntouch '" + marker + "'\n"
	for _, name := range []string{"reference-transaction", "post-checkout", "pre-commit"} {
		writeFile(t, filepath.Join(r.dir, ".git", "hooks", name), hook)
		if err := os.Chmod(filepath.Join(r.dir, ".git", "hooks", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := r.manager(Config{})
	if _, err := m.Create(t.Context(), "hooked", Owner{}); err != nil {
		t.Fatal(err)
	}
	if exists(marker) {
		t.Errorf("a repository hook ran during Create")
	}
	r.git("branch", "control")
	if !exists(marker) {
		t.Errorf("control: git run directly should run the reference-transaction hook")
	}
}

func TestRepositoryLocatingEnvironmentIgnored(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	decoy := newRepo(t)
	env := append(append([]string{}, r.env...),
		"GIT_DIR="+filepath.Join(decoy.dir, ".git"), "GIT_WORK_TREE="+decoy.dir, "GIT_INDEX_FILE="+filepath.Join(decoy.dir, "idx"))
	m := r.manager(Config{Env: env})
	if m.Root() != r.dir {
		t.Errorf("root = %s, want %s (GIT_DIR must not redirect git)", m.Root(), r.dir)
	}
	if _, err := m.Create(t.Context(), "x", Owner{}); err != nil {
		t.Fatal(err)
	}
	if got := decoy.branches(); len(got) != 0 {
		t.Errorf("the decoy repository got branches %v", got)
	}
}
