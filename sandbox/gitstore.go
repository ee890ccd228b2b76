package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cohort-dev/cohort/internal/gitobj"
	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// Bounds of heldStore: how many denied files it hashes, the largest it
// reads, and how many bytes in all.
const (
	storeFiles    = 2000
	storeFileSize = 16 << 20
	storeBytes    = 64 << 20
)

// heldStore is the sandbox's own guard of git's object store, below the
// consumer's (whose search of history adds the store to DenyReadIn when a
// denied path was ever committed or staged): when the store of the
// repository holding cwd holds, as a blob, the current contents of a
// regular file below hidden (what Read deny rules cover), it returns the
// common git dir, the working tree's git dir when it lies elsewhere and
// the object stores the alternates name, to hide as well. It reads the
// file system only (package internal/gitobj): no git runs and nothing the
// consumer decided is trusted, so a search that wrongly finds nothing
// still leaves a committed or staged denied file unreadable through .git.
// It covers denied files as they are now, not their older versions
// (those are the search's alone), up to storeFiles files of at most
// storeFileSize bytes and storeBytes in all; a store it cannot read
// counts as holding them.
func heldStore(cwd string, hidden []string) []string {
	if len(hidden) == 0 {
		return nil
	}
	lay, err := gitrepo.Find(cwd)
	if err != nil || lay.CommonDir == "" {
		return nil
	}
	store := []string{lay.CommonDir}
	if !within(lay.GitDir, lay.CommonDir) {
		store = append(store, lay.GitDir)
	}
	objects := []string{filepath.Join(lay.CommonDir, "objects")}
	for _, a := range lay.Alternates() {
		if r, err := filepath.EvalSymlinks(a); err == nil {
			objects = append(objects, r)
			store = append(store, r)
		}
	}
	isHidden := func(d string) bool {
		return slices.ContainsFunc(hidden, func(h string) bool { return d == h || within(d, h) })
	}
	if !slices.ContainsFunc(store, func(d string) bool { return !isHidden(d) }) {
		return nil // hidden already (the consumer's search found a denied file)
	}
	// Only the denied paths of the repository's own checkouts count: a
	// whole other checkout hidden (the consumer hides those) holds the
	// store's contents by nature.
	trees := []string{lay.WorkTree}
	if filepath.Base(lay.CommonDir) == ".git" {
		trees = append(trees, filepath.Dir(lay.CommonDir))
	}
	var mine []string
	for _, h := range hidden {
		if slices.ContainsFunc(trees, func(t string) bool { return within(h, t) && h != t }) {
			mine = append(mine, h)
		}
	}
	if !holdsAny(objects, deniedFiles(mine, store)) {
		return nil
	}
	return slices.DeleteFunc(store, isHidden)
}

// deniedFiles lists the regular files below hidden, leaving out the git
// stores themselves, within the bounds.
func deniedFiles(hidden, store []string) []string {
	var out []string
	for _, h := range hidden {
		_ = filepath.WalkDir(h, func(p string, d fs.DirEntry, err error) error {
			if err != nil || len(out) >= storeFiles {
				return filepath.SkipDir
			}
			if d.IsDir() && slices.Contains(store, p) {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// holdsAny reports whether any of the stores holds the contents of one of
// files, or cannot say.
func holdsAny(objects, files []string) bool {
	total := int64(0)
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || fi.Size() > storeFileSize || total+fi.Size() > storeBytes {
			continue
		}
		total += fi.Size()
		data, err := ownread.Whole(f, storeFileSize) // not a FIFO it became since
		if err != nil {
			continue
		}
		for _, id := range gitobj.BlobIDs(data) {
			for _, o := range objects {
				if has, err := gitobj.Has(o, id); has || err != nil {
					return true
				}
			}
		}
	}
	return false
}
