package assemble

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

// Repositories outside the project that a Read deny rule names. A rule
// can name a folder anywhere (Read(//home/u/src/extlib/secrets/**),
// Read(~/src/lib/secrets/**), a rule for a directory added to the
// session); the sandbox hides what it covers in the working tree, but
// the history of the repository holding that folder keeps every version
// of what it covered, including files since deleted from the tree. The
// project's own store and those nested in it are searched (gitstore.go,
// gitstore_nested.go); a store outside it is hidden whole while the rule
// is in force, never searched: its paths are its own tree's, and it is
// not the project's to prove free. Found for every rule, whether or not
// the project is a repository.
//
// For each rule's root (the directory its matches lie below, existing or
// not): the store of the repository whose working tree holds the nearest
// existing folder at or above it, and the stores of repositories whose
// working trees lie below it (a rule on a folder of many clones), found
// by the same walk as nested ones, within the same budget.

// ruleStores lists the stores to hide whole for the roots of the Read
// deny rules that lie outside top ("" when the session is in no
// repository: every root counts). skip are stores hidden already.
func ruleStores(roots []string, top string, skip []string, warn func(root, cut string)) []string {
	var out []string
	add := func(dirs ...string) {
		for _, d := range dirs {
			if !slices.Contains(out, d) && !slices.ContainsFunc(skip, func(s string) bool { return within(d, s) }) {
				out = append(out, d)
			}
		}
	}
	for _, root := range roots {
		if top != "" && within(root, top) {
			continue // the project's: searched, with what is nested in it
		}
		dir := existingAbove(root)
		if dir == "" {
			continue
		}
		if l, ok := holdingRepo(dir); ok {
			add(storeOf(l)...)
		}
		var skipTop []string
		if top != "" {
			skipTop = []string{top}
		}
		found, whole, cut := nestedRepos(dir, skipTop, ruleWalkBudget)
		for _, l := range found {
			if top == "" || !within(l.WorkTree, top) {
				add(storeOf(l)...)
			}
		}
		add(whole...)
		if cut != "" && warn != nil {
			warn(dir, cut)
		}
	}
	return out
}

// existingAbove is the nearest folder at or above p that exists, resolved
// ("" if none).
func existingAbove(p string) string {
	for d := filepath.Clean(p); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			if r, err := filepath.EvalSymlinks(d); err == nil {
				return r
			}
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// holdingRepo is the repository whose working tree holds dir (dir
// included), or whose git dir dir is in (a rule naming a path inside a
// bare repository or a .git).
func holdingRepo(dir string) (gitrepo.Layout, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) == ".git" {
			if l, err := gitrepo.Read(filepath.Dir(d)); err == nil {
				return l, true
			}
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if l, err := gitrepo.Read(d); err == nil {
				return l, true
			}
			return gitrepo.Layout{}, false
		}
		if entries, err := os.ReadDir(d); err == nil && d != dir && isBare(entries) {
			return gitrepo.Layout{CommonDir: d, GitDir: d}, true
		}
		if d == filepath.Dir(d) {
			return gitrepo.Layout{}, false
		}
	}
}

// ruleWalkBudget bounds the walk below each rule's root.
const ruleWalkBudget = 500 * time.Millisecond

// ruled adds to the stores hidden whole those the Read deny rules name
// outside the project (skip: what is hidden already).
func (g *gitStore) ruled(skip []string) {
	if g.roots == nil {
		return
	}
	top := ""
	if g.found {
		top = g.repo.WorkTree
	}
	warn := func(root, cut string) {
		fmt.Fprintf(g.warn, "cohort: sandbox: %s, which a Read deny rule names, is too large to look through for git repositories in %v (the walk stopped at %s); the stores of repositories it did not reach are not hidden from the model's commands\n", root, ruleWalkBudget, cut)
	}
	g.bare = append(g.bare, ruleStores(g.roots(), top, append(skip, g.bare...), warn)...)
}
