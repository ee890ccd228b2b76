package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// RepoRoot returns the canonical root of the repository that contains dir:
// the top level of the main worktree, also when dir is inside a linked
// worktree (one of Cohort's or the user's), so that every agent of a project
// agrees on it. For a bare repository with linked worktrees it is the bare
// repository's directory. The result has symlinks resolved. It reads the
// file system (internal/gitrepo) and runs no git; outside a repository the
// error wraps ErrNotRepository.
func RepoRoot(ctx context.Context, dir string) (string, error) {
	loc, err := locate(dir)
	return loc.root, err
}

// location is where a repository lives.
type location struct {
	root   string // canonical repo root
	common string // git directory shared by all worktrees
}

// locate finds the repository containing dir from the file system, as
// git would (the nearest .git, its git dir's commondir), but without
// running git in a directory a model may have written. `git worktree
// list` would be no help either: it names the main worktree after the git
// directory, which is wrong whenever that is not <root>/.git (submodules,
// --separate-git-dir).
func locate(dir string) (location, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return location{}, fmt.Errorf("worktree: resolve %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return location{}, fmt.Errorf("worktree: repository directory: %w", err)
	} else if !fi.IsDir() {
		return location{}, fmt.Errorf("worktree: %s is not a directory", abs)
	}
	l, err := gitrepo.Find(abs)
	if errors.Is(err, gitrepo.ErrNotRepository) {
		// A bare repository, or inside a git directory.
		if common, ok := gitDirAbove(abs); ok {
			return mainOf(common)
		}
		return location{}, fmt.Errorf("%w: %s is not inside a git repository, so the agent cannot be isolated in a worktree; run it from a repository (git init) or without isolation", ErrNotRepository, abs)
	}
	if err != nil {
		return location{}, fmt.Errorf("worktree: %w", err)
	}
	if !l.Linked {
		return location{root: canonical(l.WorkTree), common: canonical(l.CommonDir)}, nil // the main worktree
	}
	if l.CommonDir == l.GitDir && filepath.Base(filepath.Dir(l.GitDir)) != "worktrees" {
		return location{root: canonical(l.WorkTree), common: canonical(l.GitDir)}, nil // a submodule's checkout
	}
	return mainOf(canonical(l.CommonDir))
}

// gitDirAbove finds a git directory (HEAD, objects/ and refs/) at or above
// dir: dir is in a bare repository or inside a .git.
func gitDirAbove(dir string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if exists(filepath.Join(d, "HEAD")) && exists(filepath.Join(d, "objects")) && exists(filepath.Join(d, "refs")) {
			return canonical(d), true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// mainOf finds the main worktree of the repository whose git directory is
// common, from somewhere else (a linked worktree, the git directory): the
// parent of a .git, the repository itself when it is bare, or the
// core.worktree a submodule's git directory records.
func mainOf(common string) (location, error) {
	if filepath.Base(common) == ".git" {
		return location{root: filepath.Dir(common), common: common}, nil
	}
	cfg := readConfig(filepath.Join(common, "config"))
	if b := strings.ToLower(cfg["core.bare"]); b == "true" || b == "yes" || b == "on" || b == "1" {
		return location{root: common, common: common}, nil
	}
	if wt := cfg["core.worktree"]; wt != "" {
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(common, wt)
		}
		return location{root: canonical(wt), common: common}, nil
	}
	return location{}, fmt.Errorf("worktree: cannot tell where the main checkout of the repository in %s is (a repository made with --separate-git-dir keeps no record of it); start Cohort in the main checkout", common)
}

// readConfig reads the plain "section.key = value" settings of a git
// config file (no includes, no subsections), lower-cased keys.
func readConfig(path string) map[string]string {
	out := map[string]string{}
	data, err := ownread.Config(path, 0) // a nested repository's may be a FIFO
	if err != nil {
		return out
	}
	section := ""
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		out[section+"."+strings.ToLower(strings.TrimSpace(k))] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return out
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

// listWorktrees runs `git worktree list --porcelain` on repo.
func listWorktrees(ctx context.Context, g *gitRunner, repo gitrepo.Layout) ([]listEntry, error) {
	out, err := g.readRetry(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		if notRepository(err) {
			return nil, fmt.Errorf("%w: %s is not inside a git repository, so the agent cannot be isolated in a worktree; run it from a repository (git init) or without isolation", ErrNotRepository, repoDir(repo))
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
