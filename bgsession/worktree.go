package bgsession

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cohort-dev/cohort/worktree"
)

// CreateWorktree makes the worktree of a `--bg -w` session: a new
// worktree of dir's repository named slug (on branch cohort/<slug>),
// locked for this process. It returns its path.
func CreateWorktree(ctx context.Context, dir, slug, sessionID string, env []string) (string, error) {
	if err := worktree.ValidateSlug(slug); err != nil {
		return "", err
	}
	m, err := worktree.New(ctx, worktree.Config{Dir: dir, Env: env})
	if err != nil {
		return "", fmt.Errorf("--worktree: %w", err)
	}
	wt, err := m.Create(ctx, slug, worktree.Owner{SessionID: sessionID, AgentID: "bg"})
	if err != nil {
		return "", fmt.Errorf("--worktree: %w", err)
	}
	return wt.Path, nil
}

// RemoveOptions are rm's flags (Claude Code's names).
type RemoveOptions struct {
	// DiscardUnpushed lets the removal lose commits no other branch holds.
	DiscardUnpushed bool
	// ForceRemoveWorktree lets it lose modified and untracked files.
	ForceRemoveWorktree bool
	Env                 []string
}

// Remove deletes rec from the registry, and its worktree with it when
// that loses nothing the options do not allow. A live session is refused.
func (g *Registry) Remove(ctx context.Context, rec Record, o RemoveOptions) error {
	if rec = g.Check(ctx, rec); rec.Alive {
		return fmt.Errorf("session %s is running: stop it first (cohort stop %s)", rec.ID, rec.ID)
	}
	if rec.Worktree != "" {
		if err := removeWorktree(ctx, rec, o); err != nil {
			return err
		}
	}
	return g.Delete(rec.ID)
}

func removeWorktree(ctx context.Context, rec Record, o RemoveOptions) error {
	if _, err := os.Stat(rec.Worktree); errors.Is(err, os.ErrNotExist) {
		return nil // removed already
	}
	// A zombie (a session whose parent never reaped it) holds no lock.
	alive := func(pid int) bool { return ProcStart(pid) != 0 }
	m, err := worktree.New(ctx, worktree.Config{Dir: rec.Worktree, Env: o.Env, Alive: alive})
	if err != nil {
		return fmt.Errorf("session %s: worktree %s: %w", rec.ID, rec.Worktree, err)
	}
	wt, err := m.Enter(ctx, worktree.Target{Path: rec.Worktree}, worktree.Owner{SessionID: rec.SessionID, AgentID: "rm"})
	if err != nil {
		return fmt.Errorf("session %s: worktree %s: %w", rec.ID, rec.Worktree, err)
	}
	ch, err := m.Changes(ctx, wt)
	if err != nil {
		return fmt.Errorf("session %s: worktree %s: %w", rec.ID, rec.Worktree, err)
	}
	var refuse []string
	if len(ch.NewCommits) > 0 && !o.DiscardUnpushed {
		refuse = append(refuse, fmt.Sprintf("%d commit(s) no other branch holds (%s); --discard-unpushed drops them",
			len(ch.NewCommits), strings.Join(ch.NewCommits, "; ")))
	}
	if n := len(ch.Modified) + len(ch.Untracked); n > 0 && !o.ForceRemoveWorktree {
		refuse = append(refuse, fmt.Sprintf("%d modified or untracked file(s) (%s); --force-remove-worktree drops them",
			n, strings.Join(append(append([]string{}, ch.Modified...), ch.Untracked...), ", ")))
	}
	if len(refuse) > 0 {
		_, _ = m.Keep(ctx, wt)
		return fmt.Errorf("session %s: not removed: its worktree %s has %s", rec.ID, rec.Worktree, strings.Join(refuse, ", and "))
	}
	if _, err := m.Remove(ctx, wt, true); err != nil {
		return fmt.Errorf("session %s: remove worktree: %w", rec.ID, err)
	}
	return nil
}
