package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/gofrs/flock"
)

// SweepAction is what the sweep did with one worktree.
type SweepAction string

const (
	// SweepRemoved: an orphan without changes; removed with its branch.
	SweepRemoved SweepAction = "removed"
	// SweepKept: an orphan with changes, or a worktree an agent kept; left
	// in place (and unlocked).
	SweepKept SweepAction = "kept"
	// SweepInUse: locked by a live agent (or one on another host).
	SweepInUse SweepAction = "in use"
	// SweepSkipped: not Cohort's to judge (locked by someone else) or
	// touched within the grace period.
	SweepSkipped SweepAction = "skipped"
)

// SweepResult reports one worktree under .cohort/worktrees.
type SweepResult struct {
	Path    string
	Branch  string
	Action  SweepAction
	Reason  string
	Changes Changes // for SweepKept
}

// Sweep runs at start-up: it prunes git's records of deleted worktrees and
// looks at every worktree under .cohort/worktrees. An orphan — locked by
// Cohort for a process that is dead, or unlocked, not kept and untouched
// for the grace period — is removed with its branch only if it has no
// changes; one with changes is kept and unlocked. A worktree locked by a
// live process, kept by its agent, or locked by anyone but Cohort is never
// touched. Errors on one worktree do not stop the others; they are joined.
// Sweeps of one repository run one at a time, also across processes (a
// kernel lock on cohort-sweep.lock in the git directory).
func (m *Manager) Sweep(ctx context.Context) ([]SweepResult, error) {
	// One sweep at a time per repository, across processes: two sessions
	// starting together would otherwise trip over each other's removals.
	lock := flock.New(filepath.Join(m.common, "cohort-sweep.lock"))
	if _, err := lock.TryLockContext(ctx, 20*time.Millisecond); err != nil {
		return nil, fmt.Errorf("worktree: wait for another sweep: %w", err)
	}
	defer func() { _ = lock.Unlock() }()
	if _, err := m.worktreeCmd(ctx, "prune"); err != nil {
		return nil, err
	}
	entries, err := m.list(ctx)
	if err != nil {
		return nil, err
	}
	prefix := m.worktreesRoot() + string(filepath.Separator)
	var results []SweepResult
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Path, prefix) {
			continue // the main checkout and the user's own worktrees
		}
		r, err := m.sweepOne(ctx, e)
		results = append(results, r)
		if err != nil {
			errs = append(errs, fmt.Errorf("worktree: sweep %s: %w", e.Path, err))
		}
	}
	return results, errors.Join(errs...)
}

func (m *Manager) sweepOne(ctx context.Context, e listEntry) (SweepResult, error) {
	res := SweepResult{Path: e.Path, Branch: e.Branch, Action: SweepSkipped}
	admin, err := m.findAdmin(e.Path)
	if err != nil {
		return res, err
	}
	reason, locked, err := readLock(admin)
	if err != nil {
		return res, err
	}
	if _, err := os.Stat(filepath.Join(admin, keptFile)); err == nil && !locked {
		res.Action, res.Reason = SweepKept, "kept by its agent"
		return res, nil
	}
	if locked {
		r, ours := parseLockReason(reason)
		switch {
		case !ours:
			res.Reason = fmt.Sprintf("locked by someone else (%q)", reason)
			return res, nil
		case m.ownerAlive(r):
			res.Action, res.Reason = SweepInUse, fmt.Sprintf("used by agent %s of session %s (pid %d on %s)", r.Agent, r.Session, r.PID, r.Host)
			return res, nil
		}
		res.Reason = fmt.Sprintf("its process (pid %d) is gone", r.PID)
	} else {
		fi, err := os.Stat(admin)
		if err != nil {
			return res, err
		}
		if age := m.cfg.Now().Sub(fi.ModTime()); age < m.cfg.Grace {
			res.Reason = fmt.Sprintf("unlocked but touched %s ago, within the grace period", age.Round(time.Second))
			return res, nil
		}
		res.Reason = "unlocked and unused"
	}
	base, links := readMeta(admin)
	wt := &Worktree{Path: e.Path, Branch: e.Branch, Slug: m.slugOf(e.Path), HeadCommit: e.Head, BaseCommit: base, admin: admin, links: links}
	if _, err := os.Stat(e.Path); errors.Is(err, os.ErrNotExist) {
		return m.sweepMissing(ctx, wt, res)
	}
	ch, st, err := m.inspect(ctx, wt)
	if err != nil {
		res.Action = SweepKept
		return res, err
	}
	if !ch.Empty() {
		res.Action, res.Changes = SweepKept, ch
		res.Reason += "; it has changes"
		return res, m.unlock(ctx, wt)
	}
	if err := m.removeWorktree(ctx, wt, false, st.tip); err != nil {
		res.Action = SweepKept
		return res, err
	}
	res.Action = SweepRemoved
	return res, nil
}

// sweepMissing handles an orphan whose directory was deleted by hand: its
// registration goes; its branch goes too unless it has new commits.
func (m *Manager) sweepMissing(ctx context.Context, wt *Worktree, res SweepResult) (SweepResult, error) {
	res.Action = SweepKept
	if err := m.unlock(ctx, wt); err != nil {
		return res, err
	}
	if _, err := m.worktreeCmd(ctx, "prune"); err != nil {
		return res, err
	}
	if !strings.HasPrefix(wt.Branch, BranchPrefix) || wt.BaseCommit == "" {
		res.Reason += "; its directory is gone, its branch stays"
		return res, nil
	}
	ref := "refs/heads/" + wt.Branch
	out, err := m.git.read(ctx, m.main(), "log", "--no-color", "--format=%H %s", ref, "^"+wt.BaseCommit, "--")
	if err != nil {
		return res, err
	}
	if commits := strings.Fields(out); len(commits) > 0 {
		res.Changes.NewCommits = strings.Split(strings.TrimSpace(out), "\n")
		res.Reason += "; its directory is gone, its branch has new commits"
		return res, nil
	}
	if tip := m.branchTip(ctx, wt.Branch); tip != "" {
		if err := m.deleteBranch(ctx, wt.Branch, tip); err != nil {
			return res, err
		}
	}
	res.Action = SweepRemoved
	return res, nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// findAdmin returns the administrative directory of the worktree at path,
// also when its directory (and so its .git file) is gone: the one under
// the common git dir whose gitdir file names path. The worktree's own .git
// file is not read: its agent can write it.
func (m *Manager) findAdmin(path string) (string, error) {
	dirs, err := os.ReadDir(filepath.Join(m.common, "worktrees"))
	if err != nil {
		return "", fmt.Errorf("worktree: find the git records of %s: %w", path, err)
	}
	for _, d := range dirs {
		admin := filepath.Join(m.common, "worktrees", d.Name())
		data, err := ownread.GitState(filepath.Join(admin, "gitdir"), ownread.MaxGitRef)
		if err == nil && canonical(filepath.Dir(strings.TrimSpace(string(data)))) == path {
			return admin, nil
		}
	}
	return "", fmt.Errorf("worktree: no git records for %s", path)
}
