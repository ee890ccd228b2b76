package assemble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// Repositories nested in the project. A directory inside the project with
// a .git of its own (a vendored clone, a tool's cache, a repository kept
// in the tree) has a store the project's repository does not reach, and
// its history can hold what a Read deny rule covers just as the
// project's can (Read(./vendor/lib/secrets/**), with secrets/ committed
// there and removed since). While a deny rule is in force, each one is
// treated as the project's own store is: hidden from the start, searched
// beside the session's start, shown only when proven free. A submodule's
// store under the project's git dir (modules/) needs nothing more: it is
// hidden with that dir, or as a stray when the dir is proven free. A bare
// repository kept in the project (a mirror, a backup: a directory with
// HEAD, objects/ and refs/ of its own) has no working tree to match its
// history's paths against, so it is hidden whole, never searched.
//
// Decisions: they are found by walking the project's tree (git dirs and
// the agents' worktrees not entered) rather than by asking git, which
// collapses ignored directories and would miss a repository under one.
// A symlink to a directory outside the project is followed (each real
// directory once): the model's commands read through it, so a
// repository it leads into (vendor/ext -> ~/src/extlib), or one that
// holds where it leads, has a store they can read. Such a store is
// hidden whole, never searched: its history's paths are its own tree's,
// which the project's deny rules name only through the link. The walk
// has a budget (nestedWalkBudget); a project too large to walk in it is
// reported at the start, naming where the walk stopped, since what it
// did not reach is not hidden.

// nestedWalkBudget bounds the walk for nested repositories.
const nestedWalkBudget = 2 * time.Second

// nestedRepos lists the repositories whose working trees lie below top
// (not top's own), and the git dirs to hide whole: bare repositories
// there, and the stores of repositories reached through a link that
// leads out of top. It skips the directories in skip. cut is the
// directory the walk had reached when its budget ran out ("" if it
// finished).
func nestedRepos(top string, skip []string, budget time.Duration) (found []gitrepo.Layout, whole []string, cut string) {
	type item struct {
		dir    string
		linked bool // reached through a link out of top
	}
	deadline := time.Now().Add(budget)
	queue := []item{{dir: top}}
	seen := map[string]bool{}
	for len(queue) > 0 {
		it := queue[0]
		dir := it.dir
		queue = queue[1:]
		if time.Now().After(deadline) {
			return found, whole, dir
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // unreadable to Cohort: unreadable to the model's commands too
		}
		if dir != top && isBare(entries) {
			whole = append(whole, dir)
			continue
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.Name() == ".git" {
				// A .git that does not read as a repository (a file
				// naming nothing, a link leading nowhere) has no store.
				if l, err := gitrepo.Read(dir); err == nil && dir != top {
					if it.linked {
						whole = append(whole, storeOf(l)...)
					} else {
						found = append(found, l)
					}
				}
				continue
			}
			if e.Type()&os.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(p)
				if fi, serr := os.Stat(real); err != nil || serr != nil || !fi.IsDir() || within(real, top) || seen[real] {
					continue // inside the project, the walk gets there itself
				}
				seen[real] = true
				whole = append(whole, enclosingStores(real)...)
				queue = append(queue, item{dir: real, linked: true})
				continue
			}
			if e.IsDir() && !inAny(p, skip) {
				queue = append(queue, item{dir: p, linked: it.linked})
			}
		}
	}
	return found, whole, ""
}

// enclosingStores are the stores of the repository whose working tree
// holds dir, if any (a link into a repository reaches its store through
// ..).
func enclosingStores(dir string) []string {
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err != nil {
			continue
		}
		if l, err := gitrepo.Read(d); err == nil {
			return storeOf(l)
		}
		return nil
	}
	return nil
}

// isBare says whether a directory's entries are a git dir's: a HEAD file
// and objects/ and refs/ directories.
func isBare(entries []os.DirEntry) bool {
	var head, objects, refs bool
	for _, e := range entries {
		switch e.Name() {
		case "HEAD":
			head = e.Type().IsRegular()
		case "objects":
			objects = e.IsDir()
		case "refs":
			refs = e.IsDir()
		}
	}
	return head && objects && refs
}

// findInner lists the repositories nested in the working tree whose
// stores are their own (not the project's: its linked worktrees and its
// submodules live in its git dir), and says at the start when the walk
// could not finish.
func (g *gitStore) findInner() {
	found, whole, cut := nestedRepos(g.repo.WorkTree, []string{g.agents}, nestedWalkBudget)
	for _, b := range whole {
		if !within(b, g.repo.CommonDir) && !slices.Contains(g.bare, b) {
			g.bare = append(g.bare, b)
		}
	}
	for _, l := range found {
		if within(l.CommonDir, g.repo.CommonDir) {
			continue
		}
		g.inner = append(g.inner, l)
	}
	if cut != "" {
		fmt.Fprintf(g.warn, "cohort: sandbox: %s is too large to look through for nested git repositories in %v (the walk stopped at %s); the stores of repositories it did not reach are not hidden from the model's commands, and their history may hold files your Read deny rules cover\n", g.repo.WorkTree, nestedWalkBudget, cut)
	}
}

// searchInner searches each nested repository's store as search does the
// project's, after it: a store proven free is shown but for its strays,
// any other stays hidden and is named at the start.
func (g *gitStore) searchInner(ctx context.Context, git *safegit.Runner) {
	for _, l := range g.inner {
		found, loose, err := g.find(ctx, git, l)
		if faultGitStore {
			found, loose, err = "", 0, nil
		}
		why := ""
		switch {
		case err != nil:
			why = fmt.Sprintf("its history could not be searched for files your Read deny rules cover (%v)", err)
		case found != "":
			why = fmt.Sprintf("its history or index holds %s, which your Read deny rules cover", found)
		case loose > 0:
			why = fmt.Sprintf("it holds %d objects no commit, tag or index reaches, which cannot be checked against your Read deny rules", loose)
		}
		if why != "" {
			fmt.Fprintf(g.warn, "cohort: sandbox: the git repository nested at %s: %s; its git directory is hidden from the model's commands this session\n", l.WorkTree, why)
			g.hidden = append(g.hidden, storeOf(l)...)
			continue
		}
		strays := strays(l)
		g.hidden = append(g.hidden, strays...)
		if g.hide != nil {
			g.hide(strays...)
		}
		if g.show != nil {
			g.show(storeOf(l)...)
		}
	}
}
