package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	loc, err := locate(ctx, g, dir)
	return loc.root, err
}

// location is where a repository lives.
type location struct {
	root   string // canonical repo root
	common string // git directory shared by all worktrees
}

// locate finds the repository containing dir. `git worktree list` is no
// help here: it names the main worktree after the git directory, which is
// wrong whenever that is not <root>/.git (submodules, --separate-git-dir).
func locate(ctx context.Context, g *gitRunner, dir string) (location, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return location{}, fmt.Errorf("worktree: resolve %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return location{}, fmt.Errorf("worktree: repository directory: %w", err)
	} else if !fi.IsDir() {
		return location{}, fmt.Errorf("worktree: %s is not a directory", abs)
	}
	out, err := g.runReadRetry(ctx, abs, "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir", "--show-toplevel")
	if notRepository(err) {
		return location{}, fmt.Errorf("%w: %s is not inside a git repository, so the agent cannot be isolated in a worktree; run it from a repository (git init) or without isolation", ErrNotRepository, abs)
	}
	if err == nil {
		f := strings.Split(strings.TrimSpace(out), "\n")
		if len(f) != 3 {
			return location{}, fmt.Errorf("worktree: unexpected git rev-parse output %q", out)
		}
		common := canonical(f[0])
		if canonical(f[1]) == common {
			return location{root: canonical(f[2]), common: common}, nil // the main worktree
		}
		return mainOf(ctx, g, common)
	}
	// Not in a working tree: a bare repository, or inside a git directory.
	out, err = g.runReadRetry(ctx, abs, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return location{}, err
	}
	return mainOf(ctx, g, canonical(strings.TrimSpace(out)))
}

// mainOf finds the main worktree of the repository whose git directory is
// common, from somewhere else (a linked worktree, the git directory).
func mainOf(ctx context.Context, g *gitRunner, common string) (location, error) {
	if filepath.Base(common) == ".git" {
		return location{root: filepath.Dir(common), common: common}, nil
	}
	if out, err := g.runReadRetry(ctx, common, "rev-parse", "--is-bare-repository"); err == nil && strings.TrimSpace(out) == "true" {
		return location{root: common, common: common}, nil
	}
	// A submodule's git directory records its worktree in core.worktree.
	if out, err := g.runReadRetry(ctx, common, "rev-parse", "--show-toplevel"); err == nil && strings.TrimSpace(out) != "" {
		return location{root: canonical(strings.TrimSpace(out)), common: common}, nil
	}
	return location{}, fmt.Errorf("worktree: cannot tell where the main checkout of the repository in %s is (a repository made with --separate-git-dir keeps no record of it); start Cohort in the main checkout", common)
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

// MayBeRepository reports whether dir can be inside a git repository: dir
// or one of its parents holds a .git entry. False means git would answer
// "not a git repository", so a caller may skip running it (start-up runs no
// git process in a project outside git); true means ask git (RepoRoot),
// which also applies GIT_CEILING_DIRECTORIES and the rest of its rules.
func MayBeRepository(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return true
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return true // present, or unreadable: let git decide
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
