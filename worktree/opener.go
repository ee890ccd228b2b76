package worktree

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// SweepTimeout bounds the start-up sweep of orphaned worktrees, and the
// letting go of the worktrees agents entered when a session ends.
const SweepTimeout = time.Minute

// Opener is a session's way to its repository's Manager: made on first use
// (a session may start outside a repository, or before git is there; only
// an agent that asks for isolation needs it), and from origin's default
// branch when the settings say baseRef "fresh". It also sweeps orphaned
// worktrees of dead sessions in the background at the start. A failure to
// make the Manager is not remembered: a later call may find the
// repository. Safe for concurrent use.
type Opener struct {
	cfg   Config
	fresh bool

	mu  sync.Mutex
	mgr *Manager

	sweepDone chan struct{} // nil when no sweep runs
	swept     []SweepResult
	sweepErr  error
}

// NewOpener returns the opener of cfg's repository; fresh starts new
// worktrees from origin/HEAD (as last fetched) when it resolves.
func NewOpener(cfg Config, fresh bool) *Opener { return &Opener{cfg: cfg, fresh: fresh} }

// Manager returns the repository's manager, making it on first use.
func (o *Opener) Manager(ctx context.Context) (*Manager, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.mgr != nil {
		return o.mgr, nil
	}
	cfg := o.cfg
	if o.fresh && o.originHead(ctx) {
		cfg.Base = "origin/HEAD"
	}
	m, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o.mgr = m
	return m, nil
}

// originHead reports whether origin/HEAD names a commit (as last fetched;
// nothing is fetched).
func (o *Opener) originHead(ctx context.Context) bool {
	repo, err := gitrepo.Find(o.cfg.Dir)
	if err != nil {
		return false
	}
	g := safegit.Runner{Env: o.cfg.Env, Sandbox: o.cfg.Sandbox, Timeout: 10 * time.Second}
	_, err = g.Run(ctx, safegit.Cmd{Repo: repo, Dir: o.cfg.Dir, Args: []string{"rev-parse", "--verify", "--quiet", "origin/HEAD^{commit}"}})
	return err == nil
}

// StartSweep removes orphaned clean worktrees of dead sessions in the
// background (Manager.Sweep), bounded by SweepTimeout; Swept waits for it.
func (o *Opener) StartSweep(ctx context.Context) {
	o.sweepDone = make(chan struct{})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), SweepTimeout)
	go func() {
		defer close(o.sweepDone)
		defer cancel()
		if !o.linked() {
			return // no worktree but the main one: nothing to sweep
		}
		m, err := o.Manager(ctx)
		if err != nil {
			return // no git or no repository: nothing to sweep
		}
		o.swept, o.sweepErr = m.Sweep(ctx)
	}()
}

// linked reports whether the repository may have linked worktrees: its
// common git dir holds worktrees/, where git records every one (and
// `git worktree prune` prunes nothing else). Without it the sweep would
// run three sandboxed gits (version, prune, list) to find nothing, at
// the start of every session; it reads the directory instead. When the
// repository cannot be located here it answers true, and the Manager
// decides as before.
func (o *Opener) linked() bool {
	loc, err := locate(o.cfg.Dir)
	if err != nil {
		return true
	}
	_, err = os.Lstat(filepath.Join(loc.common, "worktrees"))
	return !errors.Is(err, fs.ErrNotExist)
}

// Swept waits for the sweep (if one was started) and returns what it did.
func (o *Opener) Swept() ([]SweepResult, error) {
	if o.sweepDone == nil {
		return nil, nil
	}
	<-o.sweepDone // bounded by SweepTimeout
	return o.swept, o.sweepErr
}

// CheckDir says what is wrong with a directory the "worktree" settings
// name (symlinkDirectories, sparsePaths), or "": it must be relative to
// the repository root, stay inside it, and not be git's or Cohort's own
// directory.
func CheckDir(d string) string {
	clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(d)))
	switch {
	case strings.TrimSpace(d) == "" || clean == ".":
		return "is empty"
	case filepath.IsAbs(d) || strings.HasPrefix(d, "/"):
		return "is absolute; name it relative to the repository root"
	case clean == ".." || strings.HasPrefix(clean, "../"):
		return "leaves the repository"
	case strings.HasPrefix(clean, "-"):
		return "starts with '-'"
	case clean == ".git" || strings.HasPrefix(clean, ".git/") || clean == ".cohort" || strings.HasPrefix(clean, ".cohort/"):
		return "is git's or Cohort's own directory"
	}
	return ""
}
