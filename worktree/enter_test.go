package worktree

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnterThenRemoveDirty(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	base := r.git("rev-parse", "HEAD")
	first, err := m.Create(t.Context(), "feature/x", Owner{AgentID: "first"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(first.Path, "wip.txt"), "half done\n")
	writeFile(t, filepath.Join(first.Path, "src", "main.go"), "package main // edited\n")
	r.gitIn(first.Path, "commit", "--quiet", "-am", "edit main")
	commit := r.gitIn(first.Path, "rev-parse", "HEAD") + " edit main"
	if _, err := m.Keep(t.Context(), first); err != nil {
		t.Fatal(err)
	}

	wt, err := m.Enter(t.Context(), Target{Name: "feature/x"}, Owner{SessionID: "s2", AgentID: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Path != first.Path || wt.Branch != "cohort/feature/x" || wt.Slug != "feature/x" || wt.BaseCommit != base {
		t.Errorf("Enter = %+v, want the kept worktree with its recorded base %s", wt, base)
	}
	if reason, locked, _ := readLock(wt.admin); !locked || !strings.Contains(reason, "agent=second") {
		t.Errorf("entered worktree lock = %q, %v; want locked for the second agent", reason, locked)
	}
	if exists(filepath.Join(wt.admin, keptFile)) {
		t.Error("an entered worktree is still marked kept")
	}
	if _, err := m.Enter(t.Context(), Target{Path: wt.Path}, Owner{AgentID: "third"}); !errors.Is(err, ErrInUse) {
		t.Errorf("entering a worktree in use: %v, want ErrInUse", err)
	}

	out, err := m.Remove(t.Context(), wt, false)
	var dirty *DirtyError
	if !errors.As(err, &dirty) || !errors.Is(err, ErrDirty) || !out.Kept {
		t.Fatalf("Remove without discard = %+v, %v; want a DirtyError", out, err)
	}
	want := Changes{Untracked: []string{"wip.txt"}, NewCommits: []string{commit}}
	if diff := cmp.Diff(want, dirty.Lost); diff != "" {
		t.Errorf("what would be lost (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "wip.txt") || !strings.Contains(err.Error(), "discard_changes") {
		t.Errorf("error does not list the loss or the way out: %v", err)
	}
	if !exists(wt.Path) {
		t.Fatal("a refused Remove removed the worktree")
	}

	out, err = m.Remove(t.Context(), wt, true)
	if err != nil || out.Kept || !cmp.Equal(out.Changes, want) {
		t.Fatalf("Remove with discard = %+v, %v", out, err)
	}
	assertNothingLeft(t, r)
}

func TestEnterUsersWorktreeKeepsUsersBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	path := filepath.Join(canonical(t.TempDir()), "mine")
	r.git("worktree", "add", "--quiet", "-b", "feature", path)
	writeFile(t, filepath.Join(path, "f.txt"), "f\n")
	r.gitIn(path, "add", ".")
	r.gitIn(path, "commit", "--quiet", "-m", "user work")
	tip := r.gitIn(path, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(path, "scratch.txt"), "s\n")

	wt, err := m.Enter(t.Context(), Target{Path: path}, Owner{AgentID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if wt.Branch != "feature" || wt.Slug != "" || wt.BaseCommit != "" || wt.HeadCommit != tip {
		t.Errorf("Enter = %+v", wt)
	}
	// The branch survives removal, so its commits are not at stake.
	_, err = m.Remove(t.Context(), wt, false)
	var dirty *DirtyError
	if !errors.As(err, &dirty) || !cmp.Equal(dirty.Lost, Changes{Untracked: []string{"scratch.txt"}}) {
		t.Fatalf("Remove = %v; want only scratch.txt at stake", err)
	}
	if _, err := m.Remove(t.Context(), wt, true); err != nil {
		t.Fatal(err)
	}
	if exists(path) || r.git("rev-parse", "feature") != tip {
		t.Error("the worktree should be gone and the user's branch intact")
	}
}

func TestEnterTakesOverFromDeadOwner(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	dead := r.manager(Config{})
	dead.pid = deadPID
	if _, err := dead.Create(t.Context(), "orphan", Owner{AgentID: "old"}); err != nil {
		t.Fatal(err)
	}
	m := r.manager(Config{Alive: func(pid int) bool { return pid != deadPID }})
	got, err := m.Enter(t.Context(), Target{Name: "orphan"}, Owner{AgentID: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if reason, _, _ := readLock(got.admin); !strings.Contains(reason, "agent=new") {
		t.Errorf("lock after take-over = %q", reason)
	}
	if out, err := m.Finish(t.Context(), got); err != nil || out.Kept {
		t.Errorf("Finish = %+v, %v", out, err)
	}
	assertNothingLeft(t, r)
}

func TestEnterRefusals(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	foreign, err := m.Create(t.Context(), "usb", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	r.git("worktree", "unlock", foreign.Path)
	r.git("worktree", "lock", "--reason", "on a removable disk", foreign.Path)
	tests := []struct {
		name   string
		target Target
		is     error  // nil: just an error
		says   string // part of the message
	}{
		{"unknown name", Target{Name: "nope"}, ErrNotFound, "not a worktree of"},
		{"unknown path", Target{Path: t.TempDir()}, ErrNotFound, "not a worktree of"},
		{"main checkout", Target{Path: r.dir}, nil, "main checkout"},
		{"traversal", Target{Name: "../../x"}, ErrInvalidSlug, "leave"},
		{"relative path", Target{Path: ".cohort/worktrees/usb"}, nil, "absolute"},
		{"both", Target{Name: "usb", Path: foreign.Path}, nil, "exactly one"},
		{"neither", Target{}, nil, "exactly one"},
		{"foreign lock", Target{Name: "usb"}, ErrInUse, "removable disk"},
	}
	for _, tt := range tests {
		_, err := m.Enter(t.Context(), tt.target, Owner{})
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Enter = %v; want an error (%v) saying %q", tt.name, err, tt.is, tt.says)
		}
	}
}
