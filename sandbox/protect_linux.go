//go:build linux

package sandbox

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

// protection computes, for one writing policy, what the kernel keeps
// from commands inside their writable set: whole trees bound read-only,
// the directories above them bound onto themselves (a mount point cannot
// be renamed or removed), and working directories whose top level may
// take no new directories because a protected name there does not exist
// yet. It reads the file system only; it starts no process.
type protection struct {
	p          *Policy
	disposable []string // Config.Disposable, resolved
}

// settingsDirs are the directories of a working directory whose contents
// run code or grant permissions in the next session.
var settingsDirs = []string{".cohort", ".claude"}

// root protects working directory w: its .git entry (the main checkout's
// whole git dir, or a linked worktree's .git file), its settings
// directories and .mcp.json.
func (pr *protection) root(w string) {
	p := pr.p
	disposable := slices.Contains(pr.disposable, w)
	dot := filepath.Join(w, ".git")
	if fi, err := os.Lstat(dot); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			// The link itself cannot be bound: keep every name at the top
			// of w, the link included, from changing.
			pr.freeze(w, &p.FrozenAll, "its .git is a symlink, which a command could otherwise replace")
			if t, err := filepath.EvalSymlinks(dot); err == nil && pr.writable(t) {
				addOnce(&p.ReadOnly, t)
			}
		case fi.IsDir() && disposable:
			// A throwaway clone: commits work; hooks and config stay.
			for _, f := range []string{"hooks", "config"} {
				if exists(filepath.Join(dot, f)) {
					addOnce(&p.ReadOnly, filepath.Join(dot, f))
				}
			}
		default:
			// A directory: the main checkout's git dir, whole. Its config,
			// hooks, info and every worktree's files are in it, and so is
			// any name a command might add (commondir, config.worktree,
			// hooks/ where missing). A file: a linked worktree's pointer
			// to its git dir.
			addOnce(&p.ReadOnly, dot)
		}
	}
	for _, name := range settingsDirs {
		d := filepath.Join(w, name)
		fi, err := os.Lstat(d)
		switch {
		case err != nil && disposable:
			// No session reads a throwaway clone's settings.
		case err != nil:
			pr.freeze(w, &p.FrozenDirs, name+" does not exist there, and a command must not create it")
		case fi.Mode()&fs.ModeSymlink != 0:
			pr.freeze(w, &p.FrozenDirs, name+" is a symlink, which a command could otherwise replace")
			if t, err := filepath.EvalSymlinks(d); err == nil && pr.writable(t) {
				addOnce(&p.ReadOnly, t)
			}
		default:
			addOnce(&p.ReadOnly, d)
		}
	}
	mcp := filepath.Join(w, ".mcp.json")
	if _, err := os.Lstat(mcp); err == nil {
		if t, err := filepath.EvalSymlinks(mcp); err == nil && pr.writable(t) {
			addOnce(&p.ReadOnly, t)
		}
		addOnce(&p.ReadOnly, mcp)
	}
	// A missing .mcp.json is a file: keeping commands from creating it
	// would keep them from creating any file at the top of w. Project MCP
	// servers are approved before they run, by what they run.
}

// userHomes protects the home, Cohort's home and the user's trust
// registry (Config.TrustDir) when one lies strictly
// inside a writable root (a project that holds them, a HOME set to a
// folder of the checkout): each is bound read-only whole, and the
// writable trees inside it (the session's TMPDIR, the cache, the memory
// directory) are bound back after it. Their settings, agents, hooks and
// approvals run code or grant permissions in the next session, and
// neither Landlock nor a frozen top can keep a file there from being
// made below a writable root. A home that is itself a working directory
// is protected as one (root: its .cohort and .claude).
func (pr *protection) userHomes(homes ...string) {
	p := pr.p
	for _, h := range homes {
		r, ok := realDir(h)
		if !ok || !slices.ContainsFunc(p.Writable, func(w string) bool { return r != w && within(r, w) }) {
			continue
		}
		addOnce(&p.ReadOnly, r)
		p.Why = append(p.Why, fmt.Sprintf("%s: a home directory inside a writable folder is read-only for commands (its settings run in the next session)", r))
	}
}

// freeze records that w's top level takes no new directories (list is
// FrozenDirs) or no new or removed entries at all (FrozenAll), and why.
func (pr *protection) freeze(w string, list *[]string, why string) {
	addOnce(list, w)
	pr.p.Why = append(pr.p.Why, fmt.Sprintf("%s: %s", w, why))
}

// linkedGitDir lets an agent whose working directory is a linked
// worktree commit there: its git dir and the common dir's objects, refs
// and logs are writable; the files that say where the repository is
// (commondir, gitdir) and its own config are not. The layout is read from
// the file system now, so a .git file rewritten later points nowhere new.
func (pr *protection) linkedGitDir(cwd string) (lay gitrepo.Layout, linked bool) {
	lay, err := gitrepo.Find(cwd)
	if err != nil || !lay.Linked || lay.CommonDir == lay.GitDir {
		return lay, false // not a linked worktree (a submodule's git dir, with its own config and hooks, stays read-only)
	}
	p := pr.p
	if cfg := filepath.Join(lay.GitDir, "config.worktree"); !exists(cfg) && worktreeConfig(filepath.Join(lay.CommonDir, "config")) {
		p.Notes = append(p.Notes, fmt.Sprintf("commands cannot commit in %s: the repository reads a config.worktree there (extensions.worktreeConfig), which does not exist, and a command must not create it", lay.WorkTree))
		return lay, true
	}
	if !pr.writable(lay.GitDir) {
		addOnce(&p.Writable, lay.GitDir)
	}
	for _, d := range []string{"objects", "refs", "logs"} {
		if c := filepath.Join(lay.CommonDir, d); exists(c) && !pr.writable(c) {
			addOnce(&p.Writable, c)
		}
	}
	for _, f := range []string{"commondir", "gitdir", "config.worktree"} {
		if c := filepath.Join(lay.GitDir, f); exists(c) {
			addOnce(&p.ReadOnly, c)
		}
	}
	return lay, true
}

// inWorktree maps the hook scripts of the main checkout to the linked
// worktree lay: a hook whose command names its script relatively runs in
// the agent's working directory, so an agent in a worktree would run the
// worktree's copy.
func inWorktree(scripts []string, lay gitrepo.Layout) []string {
	if filepath.Base(lay.CommonDir) != ".git" {
		return nil
	}
	main := filepath.Dir(lay.CommonDir)
	var out []string
	for _, f := range scripts {
		if rel, err := filepath.Rel(main, f); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			out = append(out, filepath.Join(lay.WorkTree, rel))
		}
	}
	return out
}

// hookScripts protects the directory of every script a configured hook
// runs, with whatever it sources from there.
func (pr *protection) hookScripts(scripts []string) {
	p := pr.p
	for _, f := range scripts {
		d, err := filepath.EvalSymlinks(filepath.Dir(f))
		if err != nil {
			// Nothing to bind. A hook whose script is missing at the
			// start does not run one that appears later (package hook).
			continue
		}
		if !pr.writable(d) {
			continue
		}
		if slices.Contains(p.Writable, d) {
			// A working directory itself cannot be read-only; the script
			// alone is, when it exists.
			if r, err := filepath.EvalSymlinks(f); err == nil {
				addOnce(&p.ReadOnly, r)
			}
			p.Notes = append(p.Notes, fmt.Sprintf("the hook script %s is at the top of a writable directory: only the script itself is protected, not what it sources or runs from there; move it into a directory of its own", f))
			continue
		}
		addOnce(&p.ReadOnly, d)
	}
}

// parents binds every directory between a protected path and the
// writable root above it onto itself: a mount point cannot be renamed,
// so no command can move the protected path's folder aside and put
// another in its place.
func (pr *protection) parents() {
	p := pr.p
	for _, ro := range p.ReadOnly {
		root := ""
		for _, w := range p.Writable {
			if within(ro, w) && len(w) > len(root) {
				root = w
			}
		}
		if root == "" || ro == root {
			continue
		}
		for a := filepath.Dir(ro); a != root && within(a, root); a = filepath.Dir(a) {
			if !slices.Contains(p.ReadOnly, a) {
				addOnce(&p.SelfBound, a)
			}
		}
	}
}

// writable reports whether path is inside the policy's writable set.
func (pr *protection) writable(path string) bool {
	for _, w := range pr.p.Writable {
		if within(path, w) {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// worktreeConfig reports whether a git config file turns on
// extensions.worktreeConfig (a plain reading: the section header, then
// the key, case-insensitively).
func worktreeConfig(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	section := ""
	for sc.Scan() {
		line := strings.ToLower(strings.TrimSpace(sc.Text()))
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[] ")
			continue
		}
		k, v, _ := strings.Cut(strings.ReplaceAll(line, " ", ""), "=")
		if section == "extensions" && k == "worktreeconfig" && (v == "true" || v == "yes" || v == "on" || v == "1") {
			return true
		}
	}
	return false
}
