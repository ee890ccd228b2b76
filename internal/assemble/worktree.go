package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/worktree"
)

// openWorktrees sets up worktree isolation for the session: the opener of
// the project's repository (from the cwd, the environment and the
// "worktree" settings) that the crew's Workspaces lease worktrees from,
// and the start-up sweep of orphaned worktrees. It must run after
// permissions and before the crew (whose config it feeds). Settings
// problems are warnings; a missing git or repository only matters once an
// agent asks for isolation.
func (s *Session) openWorktrees(ctx context.Context) {
	cfg := worktree.Config{Dir: s.Process.Cwd, Env: s.childEnviron(), Sandbox: s.git().Sandbox}
	fresh := readWorktreeSettings(s.Settings.Loaded, &cfg, s.Process.Stderr)
	s.wt = worktree.NewOpener(cfg, fresh)
	inRepo := s.Process.ProjectRoot != s.Process.Cwd || isGitDir(s.Process.Cwd)
	if inRepo && s.Process.ProjectRoot != s.Process.Cwd && s.checker != nil {
		// Agents' worktrees live under the repository root, outside a cwd
		// deeper in the tree: let them work there without asking.
		_ = s.checker.Apply(ctx, permission.RuleUpdate{Type: permission.UpdateAddDirectories,
			Destination: permission.DestSession,
			Directories: []string{filepath.Join(s.Process.ProjectRoot, filepath.FromSlash(worktree.WorktreesDir))}})
	}
	if inRepo {
		s.wt.StartSweep(ctx)
	}
}

// worktrees returns the manager factory for crew.Config.Worktrees.
func (s *Session) worktrees() func(context.Context) (*worktree.Manager, error) {
	if s.wt == nil {
		return nil
	}
	return s.wt.Manager
}

// closeWorktrees waits for the sweep, reports it, and lets go of the
// worktrees agents entered and never left (removed when clean, else kept).
func (s *Session) closeWorktrees(ws *worktree.Workspaces) {
	stderr := s.Process.Stderr
	swept, err := s.wt.Swept()
	if err != nil {
		fmt.Fprintf(stderr, "cohort: warning: sweeping orphaned worktrees: %v\n", err)
	}
	for _, r := range swept {
		if s.Process.Verbose && (r.Action == worktree.SweepRemoved || r.Action == worktree.SweepKept) {
			fmt.Fprintf(stderr, "cohort: worktree %s (%s): %s (%s)\n", r.Path, r.Branch, r.Action, r.Reason)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), worktree.SweepTimeout)
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
			if why := worktree.CheckDir(d); why != "" {
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
