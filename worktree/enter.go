package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Target names an existing worktree: exactly one of Name (a slug under
// .cohort/worktrees) or Path (an absolute path of any linked worktree of
// this repository).
type Target struct {
	Name string
	Path string
}

// Enter hands an existing worktree of this repository to an agent
// (EnterWorktree): it must be a linked worktree (never the main checkout)
// and not in use; it is locked for owner until Finish, Keep or Remove.
// A Cohort lock left by a dead process is taken over; a lock held by a live
// agent, or one Cohort did not take, yields ErrInUse. An unknown worktree
// yields ErrNotFound. Use Create for a new one.
func (m *Manager) Enter(ctx context.Context, t Target, owner Owner) (*Worktree, error) {
	path, err := m.targetPath(t)
	if err != nil {
		return nil, err
	}
	entries, err := m.list(ctx)
	if err != nil {
		return nil, err
	}
	var found *listEntry
	for i := range entries {
		if entries[i].Path == path {
			found = &entries[i]
			break
		}
	}
	switch {
	case found == nil:
		return nil, fmt.Errorf("%w: %s is not a worktree of %s; known worktrees: %s", ErrNotFound, path, m.root, worktreePaths(entries[1:]))
	case found == &entries[0] || found.Bare || found.Path == m.root:
		return nil, fmt.Errorf("worktree: %s is the main checkout, not a linked worktree; isolation needs a separate worktree", path)
	case found.Prunable:
		return nil, fmt.Errorf("%w: %s is registered but its directory is gone; run git worktree prune", ErrNotFound, path)
	}
	admin, err := m.findAdmin(path)
	if err != nil {
		return nil, err
	}
	base, links := readMeta(admin)
	wt := &Worktree{Path: path, Branch: found.Branch, Slug: m.slugOf(path), HeadCommit: found.Head, BaseCommit: base, admin: admin, links: links}
	if err := m.takeOver(ctx, wt); err != nil {
		return nil, err
	}
	if err := m.lock(ctx, wt, owner); err != nil {
		return nil, err
	}
	if err := os.Remove(filepath.Join(admin, keptFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, errors.Join(fmt.Errorf("worktree: %w", err), m.unlock(ctx, wt))
	}
	return wt, nil
}

func (m *Manager) targetPath(t Target) (string, error) {
	switch {
	case (t.Name == "") == (t.Path == ""):
		return "", errors.New("worktree: name exactly one of a worktree name or a path")
	case t.Name != "":
		if err := ValidateSlug(t.Name); err != nil {
			return "", err
		}
		return canonical(filepath.Join(m.worktreesRoot(), filepath.FromSlash(t.Name))), nil
	case !filepath.IsAbs(t.Path):
		return "", fmt.Errorf("worktree: path %q is relative; give the worktree's absolute path", t.Path)
	}
	return canonical(t.Path), nil
}

// takeOver clears a Cohort lock whose owner is dead and refuses any other.
func (m *Manager) takeOver(ctx context.Context, wt *Worktree) error {
	reason, locked, err := readLock(wt.admin)
	if err != nil || !locked {
		return err
	}
	r, ours := parseLockReason(reason)
	switch {
	case !ours:
		return fmt.Errorf("%w: %s is locked (%q); if nothing uses it, run git worktree unlock %s", ErrInUse, wt.Path, reason, wt.Path)
	case m.ownerAlive(r):
		return fmt.Errorf("%w: %s is used by agent %s of session %s (pid %d)", ErrInUse, wt.Path, r.Agent, r.Session, r.PID)
	}
	return m.unlock(ctx, wt)
}

func worktreePaths(entries []listEntry) string {
	if len(entries) == 0 {
		return "none"
	}
	paths := make([]string, len(entries))
	for i, e := range entries {
		paths[i] = e.Path
	}
	return strings.Join(paths, ", ")
}
