package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hostile repository can commit .cohort/worktrees (or .cohort) as a
// symlink; agent worktrees must never land outside the repository.
func TestCreateRefusesWorktreesDirOutsideRepo(t *testing.T) {
	t.Parallel()
	for _, link := range []string{".cohort", ".cohort/worktrees"} {
		t.Run(link, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			outside := canonical(t.TempDir())
			if err := os.MkdirAll(filepath.Join(r.dir, filepath.Dir(link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(r.dir, link)); err != nil {
				t.Fatal(err)
			}
			m := r.manager(Config{})
			wt, err := m.Create(t.Context(), "escape", Owner{SessionID: "s", AgentID: "a"})
			if err == nil {
				t.Fatalf("Create = %s, want a refusal: the worktrees dir resolves outside the repository", wt.Path)
			}
			if !errors.Is(err, ErrOutsideRepo) || !strings.Contains(err.Error(), outside) {
				t.Errorf("error = %v, want ErrOutsideRepo naming %s", err, outside)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("something was created outside the repository: %v", entries)
			}
			if got := r.branches(); len(got) != 0 {
				t.Errorf("branches left behind: %v", got)
			}
		})
	}
}

// A symlink that stays inside the repository is fine.
func TestCreateAllowsWorktreesLinkInsideRepo(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	inside := filepath.Join(r.dir, "build", "wts")
	if err := os.MkdirAll(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.dir, ".cohort"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(r.dir, ".cohort", "worktrees")); err != nil {
		t.Fatal(err)
	}
	wt, err := r.manager(Config{}).Create(t.Context(), "ok", Owner{SessionID: "s", AgentID: "a"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !strings.HasPrefix(wt.Path, r.dir+string(filepath.Separator)) {
		t.Errorf("worktree at %s, want inside %s", wt.Path, r.dir)
	}
}
