// Package gitrepo finds where a git repository's parts are by reading the
// file system, without running git: the working tree, its .git entry, the
// git dir and the common dir. Cohort asks it once, before a model writes
// anything, and then names those directories to git explicitly (package
// internal/safegit) and to the sandbox, so that nothing a command writes
// later (a worktree's .git file, a commondir file) can point git
// elsewhere.
//
// Decisions:
//
//   - A .git directory is the main worktree's git dir, and its own common
//     dir: a commondir file inside it, which would make git read another
//     repository's config and hooks, is not followed but reported.
//   - A .git file ("gitdir: <path>") is a linked worktree's or a
//     submodule's; its git dir's commondir file names the common dir. A
//     linked worktree's git dir must be <common>/worktrees/<name> and its
//     gitdir file must point back at the .git file; otherwise (a .git file
//     pointing at some other directory, inside the project or outside it)
//     the layout is reported and the git dir is used as its own common
//     dir, so no commondir file it holds is followed.
//   - A .git symlink is resolved and reported: a command could replace it.
//   - Every report names the file and says what to do.
package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// ErrNotRepository: no .git entry in the directory or above it.
var ErrNotRepository = errors.New("not inside a git repository")

// Layout is where one working tree's repository lives. Paths are absolute
// with symlinks resolved.
type Layout struct {
	// WorkTree is the directory holding .git.
	WorkTree string
	// DotGit is WorkTree/.git (not resolved: the entry itself).
	DotGit string
	// GitDir is the working tree's git dir: the main .git, or a linked
	// worktree's <common>/worktrees/<name>.
	GitDir string
	// CommonDir is the git dir shared by all worktrees (GitDir for the
	// main worktree).
	CommonDir string
	// Linked is set when DotGit is a file (a linked worktree or a
	// submodule), Symlink when it is a symbolic link.
	Linked, Symlink bool
	// Problems say what is unusual about the layout, each with the file
	// and what to do. The layout is still usable as given.
	Problems []string
}

// Find returns the layout of the repository whose working tree holds dir:
// the nearest directory at or above dir with a .git entry.
func Find(dir string) (Layout, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Layout{}, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return Read(d)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return Layout{}, fmt.Errorf("%s: %w", filepath.Join(d, ".git"), err)
		}
		if filepath.Dir(d) == d {
			return Layout{}, fmt.Errorf("%w: no .git in %s or above it", ErrNotRepository, abs)
		}
	}
}

// Read returns the layout of the working tree top (its .git entry).
func Read(top string) (Layout, error) {
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	l := Layout{WorkTree: top, DotGit: filepath.Join(top, ".git")}
	fi, err := os.Lstat(l.DotGit)
	if errors.Is(err, fs.ErrNotExist) {
		return Layout{}, fmt.Errorf("%w: %s does not exist", ErrNotRepository, l.DotGit)
	}
	if err != nil {
		return Layout{}, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(l.DotGit)
		if err != nil {
			return Layout{}, fmt.Errorf("%s is a symlink that leads nowhere (%v); replace it with the repository's .git directory", l.DotGit, err)
		}
		l.Symlink = true
		l.Problems = append(l.Problems, fmt.Sprintf("%s is a symlink to %s: Cohort uses that directory as the git dir; a command in the sandbox cannot replace the link (the project root then takes no new entries from commands); replace the link with the directory to lift that", l.DotGit, target))
		if fi, err = os.Stat(target); err != nil {
			return Layout{}, err
		}
		if fi.IsDir() {
			l.GitDir, l.CommonDir = target, target
			l.checkCommondir()
			return l, nil
		}
	}
	if fi.IsDir() {
		l.GitDir, l.CommonDir = l.DotGit, l.DotGit
		l.checkCommondir()
		return l, nil
	}
	return l.readFile()
}

// checkCommondir reports a commondir file in a main worktree's .git.
func (l *Layout) checkCommondir() {
	f := filepath.Join(l.GitDir, "commondir")
	if _, err := os.Lstat(f); err == nil {
		l.Problems = append(l.Problems, fmt.Sprintf("%s exists: in a repository's own .git directory it would make git use another repository's config and hooks; Cohort ignores it; remove it unless you put it there on purpose", f))
	}
}

// readFile reads a .git file and the git dir it names.
func (l Layout) readFile() (Layout, error) {
	data, err := ownread.GitState(l.DotGit, ownread.MaxGitRef)
	if err != nil {
		return Layout{}, err
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return Layout{}, fmt.Errorf("%s does not start with \"gitdir:\"; it is not a git file: fix or remove it", l.DotGit)
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(l.WorkTree, dir)
	}
	gd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return Layout{}, fmt.Errorf("%s names the git dir %s, which does not exist (%v): repair the worktree (git worktree repair) or remove the file", l.DotGit, dir, err)
	}
	l.Linked, l.GitDir, l.CommonDir = true, gd, gd
	common, err := ownread.GitState(filepath.Join(gd, "commondir"), ownread.MaxGitRef)
	if errors.Is(err, fs.ErrNotExist) {
		// A submodule's git dir, or one made by git init
		// --separate-git-dir, is its own common dir.
		if rel, err := filepath.Rel(l.WorkTree, gd); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			l.Problems = append(l.Problems, fmt.Sprintf("%s names the git dir %s, outside the project: Cohort uses it as the repository, and commands in the sandbox cannot write it (no commits from them); if you did not set this up (a submodule, git init --separate-git-dir), remove the file", l.DotGit, gd))
		}
		return l, nil
	}
	if err != nil {
		return Layout{}, err
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gd, c)
	}
	cd, err := filepath.EvalSymlinks(c)
	if err != nil {
		return Layout{}, fmt.Errorf("%s names the common dir %s, which does not exist (%v): repair the worktree (git worktree repair)", filepath.Join(gd, "commondir"), c, err)
	}
	back, _ := ownread.GitState(filepath.Join(gd, "gitdir"), ownread.MaxGitRef)
	backPath := strings.TrimSpace(string(back))
	if filepath.Dir(gd) != filepath.Join(cd, "worktrees") || resolve(backPath) != resolve(l.DotGit) {
		l.Problems = append(l.Problems, fmt.Sprintf("%s names %s, which is not a worktree of the repository in %s that points back at it: Cohort treats %s as a repository of its own; repair the worktree (git worktree repair) if it is one", l.DotGit, gd, cd, gd))
		return l, nil
	}
	l.CommonDir = cd
	return l, nil
}

// Env is the environment that names the layout to git: its git dir, its
// common dir and its working tree, so that git discovers nothing.
// A bare repository (no WorkTree) gets no GIT_WORK_TREE.
func (l Layout) Env() []string {
	env := []string{"GIT_DIR=" + l.GitDir, "GIT_COMMON_DIR=" + l.CommonDir}
	if l.WorkTree != "" {
		env = append(env, "GIT_WORK_TREE="+l.WorkTree)
	}
	return env
}

// Checkouts are the repository's working trees other than l's own, as its
// common dir names them (what git worktree list prints): the main
// worktree, the directory holding a common dir named .git, and each linked
// worktree, the directory of the .git file its <common>/worktrees/<name>/
// gitdir names, when that file exists (a stale entry names a directory
// that may since hold anything). Resolved and existing, each once; a bare
// repository's common dir adds none.
func (l Layout) Checkouts() []string {
	own := resolve(l.WorkTree)
	var out []string
	add := func(p string) {
		p = resolve(p)
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() || p == own || slices.Contains(out, p) {
			return
		}
		out = append(out, p)
	}
	if l.CommonDir == "" {
		return nil
	}
	if filepath.Base(l.CommonDir) == ".git" {
		add(filepath.Dir(l.CommonDir))
	}
	dir := filepath.Join(l.CommonDir, "worktrees")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, err := ownread.GitState(filepath.Join(dir, e.Name(), "gitdir"), ownread.MaxGitRef)
		if err != nil {
			continue
		}
		p := strings.TrimSpace(string(data))
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, e.Name(), p)
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			continue // a stale entry (git worktree prune drops it): no .git file there
		}
		add(filepath.Dir(p))
	}
	return out
}

// Alternates are the object stores the common dir's
// objects/info/alternates names (a relative entry is relative to the
// objects directory), clean, in file order; none when it cannot be read.
func (l Layout) Alternates() []string {
	objects := filepath.Join(l.CommonDir, "objects")
	data, err := ownread.GitState(filepath.Join(objects, "info", "alternates"), ownread.MaxGitRef)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out
}

func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
