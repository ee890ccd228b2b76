package checkpoint

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// A root's scan is what it looked like by lstat when a snapshot of it
// began: every entry under it (folders and ignored files too) but .git
// and the contents of nested repositories, by relative path, with its
// size, mtime, ctime, inode and mode. The next snapshot of the root in
// this process scans again and asks git about the paths whose entries
// differ only: none, and the last tree is reused without running git.
//
// A scan does not trust times the model can set: a write, a chmod, a
// rename or a new entry moves the ctime of the file or of its folder to
// the kernel's clock, which no process without root can set. What it must
// not trust is an entry changed within the clock's tick of the scan (a
// later write in the same tick can leave the same ctime): such an entry
// is "racy" and asked about again next time, as git re-hashes its own
// racy entries. A changed .gitignore or info/exclude can change what is
// ignored anywhere: git then lists the whole root, as before a scan.
type scan struct {
	entries map[string]largeAt
	racy    []string
	// blocking is a file git would open and wait on forever (blocked.go),
	// "" when the scan met none.
	blocking string
}

// scanLimit is the most entries a scan reads: a larger root (a vendored
// tree, say) is always listed by git, which skips its ignored folders.
const scanLimit = 200_000

// racyWindow covers the kernel's coarse clock tick (at most 10 ms) with
// room to spare.
const racyWindow = 50 * time.Millisecond

// excludeKey is info/exclude's entry in a scan.
const excludeKey = "\x00exclude"

// lastRoot is a root's last snapshot in this process and the scan it
// began with.
type lastRoot struct {
	scan    *scan
	tree    string
	large   []Large
	skipped []string
}

// scanRoot scans dir (and gitDir's info/exclude, which decides what is
// ignored); nil when it cannot: an unreadable folder, an entry that
// vanished while it was read, or a root over scanLimit entries.
func scanRoot(dir, gitDir string, start time.Time) *scan {
	w := &scanner{sc: &scan{entries: map[string]largeAt{}}, limit: start.Add(-racyWindow).UnixNano(), root: dir}
	if gitDir != "" {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(gitDir, "info", "exclude"), &st); err == nil {
			w.entry(excludeKey, &st)
		} else if !errors.Is(err, unix.ENOENT) {
			return nil
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if !w.dir(fd, "") {
		return nil
	}
	return w.sc
}

// scanner is one scan under way.
type scanner struct {
	sc    *scan
	limit int64 // entries changed at or after this (ns) are racy
	root  string
}

func (w *scanner) entry(rel string, st *unix.Stat_t) {
	k := largeAt{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, mode: os.FileMode(st.Mode)}
	if k.mtime >= w.limit || k.ctime >= w.limit {
		w.sc.racy = append(w.sc.racy, rel)
	}
	w.sc.entries[rel] = k
}

// dir scans the folder open at fd (rel is its path with a trailing
// slash, "" for the root) and closes fd.
func (w *scanner) dir(fd int, rel string) bool {
	f := os.NewFile(uintptr(fd), rel)
	names, err := f.Readdirnames(-1)
	defer f.Close()
	if err != nil {
		return false
	}
	for _, name := range names {
		if name == ".git" {
			continue
		}
		if len(w.sc.entries) >= scanLimit {
			return false
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return false
		}
		child := rel + name
		w.entry(child, &st)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if w.sc.blocking == "" && gitOpens[name] && specialMode(uint32(st.Mode)) {
				w.sc.blocking = filepath.Join(w.root, filepath.FromSlash(child))
			}
			continue
		}
		var repo unix.Stat_t
		if unix.Fstatat(fd, name+"/.git", &repo, unix.AT_SYMLINK_NOFOLLOW) == nil {
			// A nested repository: git records none of it, but looks at
			// its git dir to tell it is one.
			if w.sc.blocking == "" {
				w.sc.blocking = nestedBlocking(filepath.Join(w.root, filepath.FromSlash(child)))
			}
			continue
		}
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil || !w.dir(sub, child+"/") {
			return false
		}
	}
	return true
}

// maxPathspecs is the most paths a snapshot names to git; more, and git
// lists the whole root.
const maxPathspecs = 1000

// changedSince returns the root's last snapshot in this process and the
// files that differ from its scan (with the ones that scan found racy);
// whole is true when git must list the whole root instead: no last
// snapshot, a scan that failed, an ignore file changed, an entry that
// changed between file and folder, or too many paths.
func (s *Store) changedSince(root, index string, now *scan) (last *lastRoot, paths []string, whole bool) {
	s.mu.Lock()
	last = s.last[index]
	s.mu.Unlock()
	if last == nil || now == nil {
		return last, nil, true
	}
	isDir := func(k largeAt) bool { return k.mode.IsDir() }
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, p := range last.scan.racy {
		if k, ok := now.entries[p]; !ok || !isDir(k) {
			add(p)
		}
	}
	for p, k := range now.entries {
		old, ok := last.scan.entries[p]
		switch {
		case ok && isDir(old) != isDir(k):
			return last, nil, true
		case isDir(k):
			// a folder's new or removed entries are compared one by one
		case !ok || old != k:
			add(p)
		}
	}
	for p, k := range last.scan.entries {
		if _, ok := now.entries[p]; !ok && !isDir(k) {
			if beyondLink(root, p) {
				return last, nil, true // git refuses a path beyond a link
			}
			add(p)
		}
	}
	for _, p := range paths {
		if p == excludeKey || path.Base(p) == ".gitignore" {
			return last, nil, true
		}
	}
	return last, paths, len(paths) > maxPathspecs
}

// remember keeps a root's snapshot with the scan it began with (or
// forgets the root's last one when there is no scan).
func (s *Store) remember(index string, sc *scan, st *RootState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc == nil {
		delete(s.last, index)
		return
	}
	s.last[index] = &lastRoot{scan: sc, tree: st.Tree, large: st.Large, skipped: st.Skipped}
}

// keepOthers is the last snapshot's files over the size limit that are
// not among paths (unchanged since), then the ones listed now.
func keepOthers(last []Large, paths []string, now []Large) []Large {
	asked := map[string]bool{}
	for _, p := range paths {
		asked[p] = true
	}
	var out []Large
	for _, l := range last {
		if !asked[l.Path] {
			out = append(out, l)
		}
	}
	return append(out, now...)
}

// keepSkipped is the last snapshot's nested repositories that are still
// folders under root, with the ones listed now.
func keepSkipped(root string, last, now []string) []string {
	out := slices.Clone(now)
	for _, p := range last {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err == nil && fi.IsDir() && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
