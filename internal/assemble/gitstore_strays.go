package assemble

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Git's directory holds more than the objects and the index the search
// proves free: plain-text copies of contents and names (lost-found's
// files, rerere's cache, COMMIT_EDITMSG after commit -v, MERGE_MSG, a
// rebase's patches, a split index's shared file, an interrupted fetch's
// pack without its index). When the store is proven free, every entry of
// the git dirs that is not one of git's structural files below is hidden
// still: an allow-list, so a kind of copy nobody listed is hidden too.

// gitDirEntries are the entries of a common git dir that hold no copy of
// a file's contents or of a path the search did not check: refs, reflogs
// (commit ids and messages), the config, hooks, the objects (checked
// below), the index (its paths and blobs are walked).
var gitDirEntries = []string{"HEAD", "config", "config.worktree", "description", "hooks", "info", "objects", "refs", "logs",
	"packed-refs", "index", "FETCH_HEAD", "ORIG_HEAD", "branches", "shallow", "worktrees", "gc.log", "gc.pid"}

// worktreeEntries are those of a linked worktree's git dir.
var worktreeEntries = []string{"HEAD", "commondir", "gitdir", "index", "logs", "ORIG_HEAD", "FETCH_HEAD", "locked", "config.worktree"}

// objectEntry matches what objects/ holds by nature: loose objects'
// directories, pack/, info/, the commit-graph and multi-pack index.
var objectEntry = lazyre.New(`^([0-9a-f]{2}|pack|info|commit-graph|commit-graphs)$`)

// looseEntry matches a loose object's file name (SHA-1 or SHA-256).
var looseEntry = lazyre.New(`^([0-9a-f]{38}|[0-9a-f]{62})$`)

// packEntry matches pack/'s files.
var packEntry = lazyre.New(`^(pack-[0-9a-f]+\.(pack|idx|keep|rev|bitmap|mtimes|promisor)|multi-pack-index.*)$`)

// strays are the entries of the repository's git dirs outside the
// allow-lists, to hide while the rest is shown.
func strays(repo gitrepo.Layout) []string {
	var out []string
	add := func(dir string, keep func(name string) bool) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !keep(e.Name()) {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	in := func(list []string) func(string) bool { return func(n string) bool { return slices.Contains(list, n) } }
	dirs := []string{repo.CommonDir}
	if !within(repo.GitDir, repo.CommonDir) {
		dirs = append(dirs, repo.GitDir)
	}
	for _, d := range dirs {
		add(d, in(gitDirEntries))
		add(filepath.Join(d, "objects"), objectEntry.MatchString)
		add(filepath.Join(d, "objects", "pack"), packEntry.MatchString)
		// An interrupted write leaves its temporary file (the object's
		// zlib stream) beside the loose objects, which git never lists.
		loose, _ := filepath.Glob(filepath.Join(d, "objects", "[0-9a-f][0-9a-f]"))
		for _, l := range loose {
			add(l, looseEntry.MatchString)
		}
	}
	wts, _ := os.ReadDir(filepath.Join(repo.CommonDir, "worktrees"))
	for _, w := range wts {
		add(filepath.Join(repo.CommonDir, "worktrees", w.Name()), in(worktreeEntries))
	}
	return out
}
