package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Outcome is what became of a worktree when its agent let go of it.
type Outcome struct {
	Path   string
	Branch string
	// Kept is true when the worktree and its branch are still there.
	Kept bool
	// Changes are the worktree's changes (Finish, Keep) or, for Remove,
	// what removal lost or would lose.
	Changes Changes
}

// DirtyError is Remove refusing a worktree with changes. It matches
// ErrDirty with errors.Is.
type DirtyError struct {
	Path string
	Lost Changes // what removal would lose
}

func (e *DirtyError) Error() string {
	return fmt.Sprintf("worktree: %s has changes that removal would lose; keep it, or remove it with discard_changes: true to drop them:\n%s", e.Path, e.Lost)
}

// Is makes errors.Is(err, ErrDirty) true.
func (e *DirtyError) Is(target error) bool { return target == ErrDirty }

// Finish ends an agent's use of wt the automatic way: a worktree without
// changes is removed together with its cohort/ branch; one with changes is
// kept (unlocked and marked kept) and the Outcome says where and what.
// If the changes cannot be determined the worktree is kept.
func (m *Manager) Finish(ctx context.Context, wt *Worktree) (Outcome, error) {
	ch, st, err := m.inspect(ctx, wt)
	if err != nil {
		out, kerr := m.keep(ctx, wt, Changes{})
		return out, errors.Join(fmt.Errorf("worktree: cannot tell whether %s has changes, keeping it: %w", wt.Path, err), kerr)
	}
	if !ch.Empty() {
		return m.keep(ctx, wt, ch)
	}
	if err := m.removeWorktree(ctx, wt, false, st.tip); err != nil {
		return Outcome{Path: wt.Path, Branch: wt.Branch, Kept: true}, err
	}
	return Outcome{Path: wt.Path, Branch: wt.Branch}, nil
}

// Keep ends an agent's use of wt and leaves it in place whatever it holds
// (ExitWorktree with action "keep"). The sweep never removes a kept worktree.
func (m *Manager) Keep(ctx context.Context, wt *Worktree) (Outcome, error) {
	ch, err := m.Changes(ctx, wt)
	out, kerr := m.keep(ctx, wt, ch)
	return out, errors.Join(err, kerr)
}

func (m *Manager) keep(ctx context.Context, wt *Worktree, ch Changes) (Outcome, error) {
	out := Outcome{Path: wt.Path, Branch: wt.Branch, Kept: true, Changes: ch}
	var werr error
	if wt.admin != "" {
		werr = writeMeta(wt.admin, keptFile, m.cfg.Now().UTC().Format(time.RFC3339)+"\n")
	}
	return out, errors.Join(werr, m.unlock(ctx, wt))
}

// Remove deletes wt and, if it is one of Cohort's, its cohort/ branch
// (ExitWorktree with action "remove"). When that would lose anything —
// modified or untracked files, or commits that only the deleted branch or
// a detached HEAD holds — Remove refuses with a *DirtyError listing them,
// unless discard is true. The Outcome lists what was lost.
func (m *Manager) Remove(ctx context.Context, wt *Worktree, discard bool) (Outcome, error) {
	ch, st, err := m.inspect(ctx, wt)
	if err != nil {
		return Outcome{Path: wt.Path, Branch: wt.Branch, Kept: true}, err
	}
	lost := Changes{Modified: ch.Modified, Untracked: ch.Untracked}
	if st.branch == "" || st.tip != "" || strings.HasPrefix(st.branch, BranchPrefix) {
		// A detached HEAD, or a cohort/ branch that goes with the worktree:
		// the new commits go too. A user's branch keeps them.
		lost.NewCommits = ch.NewCommits
	}
	if !lost.Empty() && !discard {
		return Outcome{Path: wt.Path, Branch: wt.Branch, Kept: true, Changes: lost}, &DirtyError{Path: wt.Path, Lost: lost}
	}
	force := len(lost.Modified)+len(lost.Untracked) > 0
	if err := m.removeWorktree(ctx, wt, force, st.tip); err != nil {
		return Outcome{Path: wt.Path, Branch: wt.Branch, Kept: true, Changes: lost}, err
	}
	return Outcome{Path: wt.Path, Branch: wt.Branch, Changes: lost}, nil
}

// removeWorktree removes Cohort's symlinks, unlocks, removes the worktree
// and deletes its cohort/ branch if it still points at tip, the commit seen
// when the changes were checked ("" keeps the branch). Without force, git
// itself refuses a worktree with modified or untracked files: a second
// check that fails closed.
func (m *Manager) removeWorktree(ctx context.Context, wt *Worktree, force bool, tip string) error {
	for _, l := range wt.links {
		if m.isOwnLink(wt, l) {
			if err := os.Remove(filepath.Join(wt.Path, filepath.FromSlash(l))); err != nil {
				return fmt.Errorf("worktree: remove link: %w", err)
			}
		}
	}
	if err := m.unlock(ctx, wt); err != nil {
		return err
	}
	args := []string{"remove"}
	if force {
		args = append(args, "--force")
	}
	if _, err := m.worktreeCmd(ctx, append(args, wt.Path)...); err != nil {
		return err
	}
	m.removeEmptyParents(wt.Path)
	if tip == "" {
		return nil
	}
	return m.deleteBranch(ctx, wt.Branch, tip)
}

// discard force-removes a worktree Create just made, with its branch.
func (m *Manager) discard(ctx context.Context, wt *Worktree) error {
	if err := m.unlock(ctx, wt); err != nil {
		return err
	}
	if _, err := m.worktreeCmd(ctx, "remove", "--force", wt.Path); err != nil {
		return err
	}
	m.removeEmptyParents(wt.Path)
	return m.deleteBranch(ctx, wt.Branch, wt.BaseCommit)
}

// deleteBranch deletes refs/heads/<branch> only if it still points at tip
// (a compare-and-swap: a branch that moved meanwhile is kept).
func (m *Manager) deleteBranch(ctx context.Context, branch, tip string) error {
	_, err := m.git.writeRetry(ctx, m.main(), m.writes(), "update-ref", "-m", "cohort: remove agent worktree", "-d", "refs/heads/"+branch, tip)
	return err
}

// removeEmptyParents deletes directories a slug like "a/b" left empty
// between the worktree and WorktreesDir (not WorktreesDir itself).
func (m *Manager) removeEmptyParents(path string) {
	top := m.worktreesRoot()
	for dir := filepath.Dir(path); dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // fails unless empty
			return
		}
	}
}
