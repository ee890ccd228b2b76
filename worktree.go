package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/worktree"
)

// sweepTimeout bounds the start-up sweep of orphaned worktrees.
const sweepTimeout = time.Minute

// sessionWorktrees is a session's worktree isolation: the manager of the
// project's repository (made on first use, from the cwd, the environment
// and the "worktree" settings) that the runtime's Workspaces lease
// worktrees from, and the start-up sweep of orphaned worktrees. Safe for
// concurrent use.
type sessionWorktrees struct {
	cfg   worktree.Config
	fresh bool // baseRef "fresh": start from origin/HEAD when it resolves

	mu  sync.Mutex
	mgr *worktree.Manager

	sweepDone chan struct{} // nil when no sweep runs
	swept     []worktree.SweepResult
	sweepErr  error
}

// openWorktrees sets up worktree isolation for the session. It must run
// after permissions and before the runtime (whose config it feeds).
// Settings problems are warnings; a missing git or repository only matters
// once an agent asks for isolation.
func (s *Session) openWorktrees(ctx context.Context) {
	w := &sessionWorktrees{cfg: worktree.Config{Dir: s.cwd, Env: s.inv.Environ(), Sandbox: s.git().Sandbox}}
	w.fresh = readWorktreeSettings(s.settings, &w.cfg, s.inv.Stderr)
	s.wt = w
	inRepo := s.projectRoot != s.cwd || isGitDir(s.cwd)
	if inRepo && s.projectRoot != s.cwd && s.checker != nil {
		// Agents' worktrees live under the repository root, outside a cwd
		// deeper in the tree: let them work there without asking.
		_ = s.checker.Apply(ctx, permission.RuleUpdate{Type: permission.UpdateAddDirectories,
			Destination: permission.DestSession,
			Directories: []string{filepath.Join(s.projectRoot, filepath.FromSlash(worktree.WorktreesDir))}})
	}
	if inRepo {
		w.startSweep(ctx)
	}
}

// worktrees returns the manager factory for crew.Config.Worktrees.
func (w *sessionWorktrees) worktrees() func(context.Context) (*worktree.Manager, error) {
	if w == nil {
		return nil
	}
	return w.manager
}

// manager returns the repository's manager, making it on first use. A
// failure is not remembered: a later call may find the repository.
func (w *sessionWorktrees) manager(ctx context.Context) (*worktree.Manager, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mgr != nil {
		return w.mgr, nil
	}
	cfg := w.cfg
	if w.fresh && w.originHead(ctx) {
		cfg.Base = "origin/HEAD"
	}
	m, err := worktree.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	w.mgr = m
	return m, nil
}

// originHead reports whether origin/HEAD names a commit (as last fetched;
// nothing is fetched).
func (w *sessionWorktrees) originHead(ctx context.Context) bool {
	repo, err := gitrepo.Find(w.cfg.Dir)
	if err != nil {
		return false
	}
	g := safegit.Runner{Env: w.cfg.Env, Sandbox: w.cfg.Sandbox, Timeout: 10 * time.Second}
	_, err = g.Run(ctx, safegit.Cmd{Repo: repo, Dir: w.cfg.Dir, Args: []string{"rev-parse", "--verify", "--quiet", "origin/HEAD^{commit}"}})
	return err == nil
}

// startSweep removes orphaned clean worktrees of dead sessions in the
// background; close waits for it and reports.
func (w *sessionWorktrees) startSweep(ctx context.Context) {
	w.sweepDone = make(chan struct{})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sweepTimeout)
	go func() {
		defer close(w.sweepDone)
		defer cancel()
		m, err := w.manager(ctx)
		if err != nil {
			return // no git or no repository: nothing to sweep
		}
		w.swept, w.sweepErr = m.Sweep(ctx)
	}()
}

// close waits for the sweep, reports it, and lets go of the worktrees
// agents entered and never left (removed when clean, else kept).
func (w *sessionWorktrees) close(ws *worktree.Workspaces, stderr io.Writer, verbose bool) {
	if w.sweepDone != nil {
		<-w.sweepDone // bounded by sweepTimeout
		if w.sweepErr != nil {
			fmt.Fprintf(stderr, "cohort: warning: sweeping orphaned worktrees: %v\n", w.sweepErr)
		}
		for _, r := range w.swept {
			if verbose && (r.Action == worktree.SweepRemoved || r.Action == worktree.SweepKept) {
				fmt.Fprintf(stderr, "cohort: worktree %s (%s): %s (%s)\n", r.Path, r.Branch, r.Action, r.Reason)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	if err := ws.Close(ctx); err != nil {
		fmt.Fprintf(stderr, "cohort: warning: letting go of entered worktrees: %v\n", err)
	}
}

// readWorktreeSettings applies the "worktree" settings (Claude Code's
// keys) to cfg: symlinkDirectories, sparsePaths and baseRef ("head", the
// default, or "fresh": origin's default branch as last fetched). Bad
// entries are dropped with a warning naming the file and line. It reports
// whether baseRef is "fresh".
func readWorktreeSettings(s *settings.Settings, cfg *worktree.Config, stderr io.Writer) (fresh bool) {
	if s == nil {
		return false
	}
	entries, probs := settings.MergeObject[json.RawMessage](s, "worktree")
	for _, p := range probs {
		fmt.Fprintf(stderr, "cohort: warning: %v\n", p)
	}
	warn := func(e settings.Sourced[json.RawMessage], key, msg string) {
		fmt.Fprintf(stderr, "cohort: warning: %s:%d: worktree.%s: %s\n", e.Source.Path, e.Line, key, msg)
	}
	dirs := func(key string) []string {
		e, ok := entries[key]
		if !ok {
			return nil
		}
		var list []string
		if err := json.Unmarshal(e.Value, &list); err != nil {
			warn(e, key, "must be an array of directory names relative to the repository root; it is ignored")
			return nil
		}
		var out []string
		for _, d := range list {
			if why := badWorktreeDir(d); why != "" {
				warn(e, key, fmt.Sprintf("%q %s; the entry is ignored", d, why))
				continue
			}
			out = append(out, d)
		}
		return out
	}
	cfg.Symlinks = dirs("symlinkDirectories")
	cfg.Sparse = dirs("sparsePaths")
	if e, ok := entries["baseRef"]; ok {
		var ref string
		_ = json.Unmarshal(e.Value, &ref)
		switch ref {
		case "head":
		case "fresh":
			fresh = true
		default:
			warn(e, "baseRef", fmt.Sprintf("%s is not \"head\" or \"fresh\"; worktrees start from HEAD", e.Value))
		}
	}
	return fresh
}

// badWorktreeDir says what is wrong with a configured directory, or "".
func badWorktreeDir(d string) string {
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
