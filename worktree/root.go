package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RepoRoot returns the canonical root of the repository that contains dir:
// the top level of the main worktree, also when dir is inside a linked
// worktree (one of Cohort's or the user's), so that every agent of a project
// agrees on it. For a bare repository with linked worktrees it is the bare
// repository's directory. The result has symlinks resolved. It runs the git
// found on PATH; outside a repository the error wraps ErrNotRepository.
func RepoRoot(ctx context.Context, dir string) (string, error) {
	g, err := newGitRunner(ctx, "", nil, 0, false)
	if err != nil {
		return "", err
	}
	main, err := mainWorktree(ctx, g, dir)
	if err != nil {
		return "", err
	}
	return main.Path, nil
}

// mainWorktree lists the worktrees of the repository containing dir and
// returns the main one (git lists it first).
func mainWorktree(ctx context.Context, g *gitRunner, dir string) (listEntry, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return listEntry{}, fmt.Errorf("worktree: resolve %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return listEntry{}, fmt.Errorf("worktree: repository directory: %w", err)
	} else if !fi.IsDir() {
		return listEntry{}, fmt.Errorf("worktree: %s is not a directory", abs)
	}
	entries, err := listWorktrees(ctx, g, abs)
	if err != nil {
		return listEntry{}, err
	}
	if len(entries) == 0 {
		return listEntry{}, fmt.Errorf("worktree: git worktree list printed nothing in %s", abs)
	}
	return entries[0], nil
}

// listEntry is one record of `git worktree list --porcelain`.
type listEntry struct {
	Path     string // symlinks resolved when the directory exists
	Head     string
	Branch   string // short name; "" when detached or bare
	Bare     bool
	Detached bool
	Locked   bool
	Prunable bool
}

// listWorktrees runs `git worktree list --porcelain` in dir.
func listWorktrees(ctx context.Context, g *gitRunner, dir string) ([]listEntry, error) {
	out, err := g.runReadRetry(ctx, dir, "worktree", "list", "--porcelain")
	if err != nil {
		if notRepository(err) {
			return nil, fmt.Errorf("%w: %s is not inside a git repository, so the agent cannot be isolated in a worktree; run it from a repository (git init) or without isolation", ErrNotRepository, dir)
		}
		return nil, err
	}
	return parseWorktreeList(out), nil
}

// parseWorktreeList parses porcelain records separated by blank lines.
// Lock reasons are not taken from here (older gits quote or omit them); they
// are read from the worktree's administrative directory instead.
func parseWorktreeList(out string) []listEntry {
	var entries []listEntry
	var cur *listEntry
	for line := range strings.SplitSeq(out, "\n") {
		if line == "" {
			cur = nil
			continue
		}
		key, val, _ := strings.Cut(line, " ")
		if key == "worktree" {
			entries = append(entries, listEntry{Path: canonical(val)})
			cur = &entries[len(entries)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch key {
		case "HEAD":
			cur.Head = val
		case "branch":
			cur.Branch = strings.TrimPrefix(val, "refs/heads/")
		case "bare":
			cur.Bare = true
		case "detached":
			cur.Detached = true
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	return entries
}

// canonical makes p absolute and resolves its symlinks when it exists, so
// paths from git and from callers compare equal (/var vs /private/var).
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

func notRepository(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository")
}

// commonDir returns the absolute git directory shared by all worktrees.
func commonDir(ctx context.Context, g *gitRunner, dir string) (string, error) {
	out, err := g.runRead(ctx, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	return canonical(strings.TrimSpace(out)), nil
}
