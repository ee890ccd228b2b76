package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/tool"
)

// Hooks fire the user's hooks around an agent's worktree: the optional
// hook capability hook.WorktreeHooks (hook.Scope implements it).
type Hooks = hook.WorktreeHooks

// WorkspacesConfig configures the Workspaces of a session.
type WorkspacesConfig struct {
	// Manager returns the repository's worktree manager, typically made on
	// first use. Its error (git missing, not a repository) is what an agent
	// that asked for isolation is told: isolation is then impossible, and
	// nothing runs unisolated instead.
	Manager func(ctx context.Context) (*Manager, error)
	// SessionID is recorded in each worktree's lock.
	SessionID string
	// Home expands "~" in Bash commands (default $HOME).
	Home string
	// Move switches a running agent to another working directory and write
	// guard (crew.Crew.MoveAgent). EnterWorktree and ExitWorktree
	// need it.
	Move func(agentID, cwd string, guard tool.WriteGuard) error
	// Hooks returns an agent's worktree hooks; nil (or a nil result) fires
	// none.
	Hooks func(agentID string) Hooks
	// FinishTimeout bounds the git work of letting go of a worktree once
	// its agent has ended or was cancelled (default 1 minute).
	FinishTimeout time.Duration
}

// Workspaces leases worktrees to the agents of one session and remembers
// which agent entered which worktree with EnterWorktree. Safe for
// concurrent use.
type Workspaces struct {
	cfg WorkspacesConfig

	mu      sync.Mutex
	entered map[string]*entry // by agent id
}

// entry is a worktree an agent entered with EnterWorktree, and where it
// came from.
type entry struct {
	lease     *Lease
	prevCwd   string
	prevGuard tool.WriteGuard
}

// NewWorkspaces returns the Workspaces of a session.
func NewWorkspaces(cfg WorkspacesConfig) *Workspaces {
	if cfg.FinishTimeout <= 0 {
		cfg.FinishTimeout = time.Minute
	}
	return &Workspaces{cfg: cfg, entered: map[string]*entry{}}
}

// FinishContext returns a context for letting go of worktrees after ctx
// has ended: it keeps ctx's values, not its cancellation, and has the
// configured deadline. A cancelled agent's worktree must still be removed
// or kept.
func (w *Workspaces) FinishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), w.cfg.FinishTimeout)
}

func (w *Workspaces) manager(ctx context.Context) (*Manager, error) {
	if w.cfg.Manager == nil {
		return nil, errors.New("worktree isolation is not set up in this session")
	}
	return w.cfg.Manager(ctx)
}

func (w *Workspaces) hooks(agentID string) Hooks {
	if w.cfg.Hooks == nil {
		return nil
	}
	return w.cfg.Hooks(agentID)
}

// Lease is an agent's hold on a worktree, from Create or Enter until
// Finish, Keep or Remove. It belongs to one agent: its methods must not be
// called concurrently.
type Lease struct {
	// Worktree is the worktree; Guard confines the agent to it.
	Worktree *Worktree
	Guard    *Guard
	m        *Manager
	hooks    Hooks
	done     bool
}

// Create makes a new worktree with the given slug for owner and locks it:
// the WorktreeCreate hooks run first and may refuse. hooks may be nil.
func (w *Workspaces) Create(ctx context.Context, slug string, owner Owner, hooks Hooks) (*Lease, error) {
	m, err := w.manager(ctx)
	if err != nil {
		return nil, err
	}
	if err := ValidateSlug(slug); err != nil {
		return nil, err
	}
	if hooks != nil {
		path := filepath.Join(m.Root(), filepath.FromSlash(WorktreesDir), filepath.FromSlash(slug))
		if out := hooks.WorktreeCreate(ctx, path, BranchPrefix+slug); out.Block {
			return nil, fmt.Errorf("a WorktreeCreate hook refused the worktree %s: %s", path, out.Reason)
		}
	}
	wt, err := m.Create(ctx, slug, owner)
	if err != nil {
		return nil, err
	}
	return w.lease(ctx, m, wt, hooks, true)
}

// Enter hands an existing worktree (by slug or absolute path) to owner
// and locks it; see worktree.Manager.Enter.
func (w *Workspaces) Enter(ctx context.Context, t Target, owner Owner, hooks Hooks) (*Lease, error) {
	m, err := w.manager(ctx)
	if err != nil {
		return nil, err
	}
	wt, err := m.Enter(ctx, t, owner)
	if err != nil {
		return nil, err
	}
	return w.lease(ctx, m, wt, hooks, false)
}

// lease finishes a lease on a worktree that is locked for the agent: it
// makes the guard, or lets go of the worktree again if it cannot.
func (w *Workspaces) lease(ctx context.Context, m *Manager, wt *Worktree, hooks Hooks, fresh bool) (*Lease, error) {
	l := &Lease{Worktree: wt, m: m, hooks: hooks}
	guard, err := m.Guard(ctx, wt, w.cfg.Home)
	if err != nil {
		fctx, cancel := w.FinishContext(ctx)
		defer cancel()
		var rerr error
		if fresh {
			_, rerr = m.Remove(fctx, wt, false)
		} else {
			_, rerr = m.Keep(fctx, wt)
		}
		return nil, errors.Join(err, rerr)
	}
	l.Guard = guard
	return l, nil
}

// Path returns the worktree's path.
func (l *Lease) Path() string { return l.Worktree.Path }

// Branch returns the worktree's branch.
func (l *Lease) Branch() string { return l.Worktree.Branch }

// Root returns the repository root (the main checkout).
func (l *Lease) Root() string { return l.m.Root() }

// Cwd maps a directory of the main checkout to the same directory in the
// worktree, when the worktree has it; anything else maps to the
// worktree's top.
func (l *Lease) Cwd(dir string) string {
	top := l.Worktree.Path
	if dir == "" {
		return top
	}
	rel, err := filepath.Rel(l.m.Root(), canonicalPrefix(dir))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) ||
		rel == ".cohort" || strings.HasPrefix(filepath.ToSlash(rel), ".cohort/") {
		return top
	}
	in := filepath.Join(top, rel)
	if fi, err := os.Stat(in); err == nil && fi.IsDir() {
		return in
	}
	return top
}

// Finish lets go of the worktree the automatic way: without changes it is
// removed with its branch (the WorktreeRemove hooks run first); with
// changes it is kept and the outcome names it. Calling it again is a no-op.
func (l *Lease) Finish(ctx context.Context) (Outcome, error) {
	if l.done {
		return Outcome{Path: l.Path(), Branch: l.Branch()}, nil
	}
	l.done = true
	if l.hooks != nil {
		if ch, err := l.m.Changes(ctx, l.Worktree); err == nil && ch.Empty() {
			l.hooks.WorktreeRemove(ctx, l.Path(), l.Branch())
		}
	}
	return l.m.Finish(ctx, l.Worktree)
}

// Keep lets go of the worktree and leaves it in place whatever it holds.
func (l *Lease) Keep(ctx context.Context) (Outcome, error) {
	l.done = true
	return l.m.Keep(ctx, l.Worktree)
}

// Remove deletes the worktree and its cohort/ branch. With changes it
// refuses with a *worktree.DirtyError listing them (the lease stays
// valid), unless discard is true. The WorktreeRemove hooks run just before
// the removal.
func (l *Lease) Remove(ctx context.Context, discard bool) (Outcome, error) {
	if !discard {
		ch, err := l.m.Changes(ctx, l.Worktree)
		if err != nil {
			return Outcome{Path: l.Path(), Branch: l.Branch(), Kept: true}, err
		}
		// What removal loses: files always, commits unless a user's branch
		// keeps them. Then the library refuses (and words the refusal)
		// without the hooks having run for nothing.
		lost := len(ch.Modified)+len(ch.Untracked) > 0 ||
			len(ch.NewCommits) > 0 && (l.Branch() == "" || strings.HasPrefix(l.Branch(), BranchPrefix))
		if lost {
			out, err := l.m.Remove(ctx, l.Worktree, false)
			if err == nil {
				l.done = true
			}
			return out, err
		}
	}
	if l.hooks != nil {
		l.hooks.WorktreeRemove(ctx, l.Path(), l.Branch())
	}
	out, err := l.m.Remove(ctx, l.Worktree, discard)
	if err == nil {
		l.done = true
	}
	return out, err
}

// Release lets go of the worktree agentID entered with EnterWorktree and
// never left, the automatic way (Finish); it reports false when there is
// none. Runtimes call it when an agent ends.
func (w *Workspaces) Release(ctx context.Context, agentID string) (Outcome, bool, error) {
	w.mu.Lock()
	e := w.entered[agentID]
	delete(w.entered, agentID)
	w.mu.Unlock()
	if e == nil {
		return Outcome{}, false, nil
	}
	out, err := e.lease.Finish(ctx)
	return out, true, err
}

// Close releases every worktree still entered (the session is ending).
func (w *Workspaces) Close(ctx context.Context) error {
	w.mu.Lock()
	ids := make([]string, 0, len(w.entered))
	for id := range w.entered {
		ids = append(ids, id)
	}
	w.mu.Unlock()
	var errs []error
	for _, id := range ids {
		if _, _, err := w.Release(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
