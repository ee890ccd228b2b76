//go:build linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// helperDataLimit is the heap of each of Cohort's own programs (Policy.
// DataLimit): git's reads of refs, HEAD and alternates take the whole
// file, so a link to /dev/urandom (which git itself needs, for the
// names of its temporary files) grows one without end, at 100-500 MB/s:
// it stops within seconds. Well above what git needs for a checkpoint or
// a worktree (packs and files are mapped, which does not count; an index
// of 400,000 files takes about 100 MB).
const helperDataLimit = 512 << 20

// unreadable are the places Cohort's own programs may open nothing in
// (package doc, "Cohort's own programs"): /dev, of which the launcher
// grants /dev/null alone, and the private TMPDIR, the one place a
// sandboxed command can make a FIFO or a device file. A TMPDIR in the
// session's temporary directory ($COHORT_HOME/tmp/ID) takes every
// session's with it ($COHORT_HOME/tmp): another session's command cannot
// plant one for this session's git either. An unconfined sandbox has
// none.
func (s *Sandbox) unreadable() []string {
	if s.cfg.Unconfined || s.tmp == "" {
		return nil
	}
	out := []string{"/dev", s.tmp}
	if s.pool != "" {
		out = append(out, s.pool)
	}
	return out
}

// allBut lists the trees that hold everything below top but excl (clean,
// absolute, links resolved): walking down from top toward each excluded
// path, every
// directory and regular file beside the way, with the directories on the
// way (ancestors), whose entries it listed. A link on the way is not
// followed, and nothing else is listed (a FIFO at the top of the home is
// granted to nobody).
func allBut(top string, excl []string) (grants, ancestors []string) {
	var walk func(dir string)
	walk = func(dir string) {
		ancestors = append(ancestors, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case slices.ContainsFunc(excl, func(x string) bool { return within(p, x) }):
			case slices.ContainsFunc(excl, func(x string) bool { return within(x, p) }):
				if e.IsDir() {
					walk(p)
				}
			case e.IsDir() || e.Type().IsRegular():
				grants = append(grants, p)
			}
		}
	}
	walk(top)
	return grants, ancestors
}

// readPrint lists the entries of the directories a helper policy's
// Readable was listed from (the ancestors of what it leaves out): an
// entry made there since (a file at the top of a project that holds the
// TMPDIR) needs a rule of its own, so the policy is set up again. Taken
// before the listing, so that nothing made between them is missed.
func (s *Sandbox) readPrint() string {
	excl := s.unreadable()
	if len(excl) == 0 {
		return ""
	}
	var dirs []string
	for _, x := range excl {
		for d := filepath.Dir(x); ; d = filepath.Dir(d) {
			addOnce(&dirs, d)
			if d == "/" {
				break
			}
		}
	}
	slices.Sort(dirs)
	var b strings.Builder
	for _, d := range dirs {
		entries, _ := os.ReadDir(d)
		b.WriteString(d)
		for _, e := range entries {
			b.WriteString("\x00" + e.Name())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// addReadable lets the thread read files and run programs beneath path,
// one of a policy's Readable: opened with no link followed (a name that
// became a link since is skipped rather than granted where it leads), and
// only a directory or a regular file.
func addReadable(rs int, path string, access, handled uint64) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		fd, err = unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
		return nil // gone, or a link now: nothing to grant
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFREG:
		access &= fileRights
	default:
		return nil
	}
	return llAddPathRule(rs, access&handled, fd)
}

// holdsUnreadable reports whether the writable root w of a policy with
// Readable holds a place the policy leaves unreadable (a TMPDIR inside
// the project a helper writes).
func holdsUnreadable(p *Policy, w string) bool {
	return len(p.Readable) > 0 && slices.ContainsFunc(p.Unreadable, func(x string) bool { return x != w && within(x, w) })
}

// addWritableAllBut grants the writable root w of Cohort's own program
// all but its unreadable places: what lies beside the way to them in
// full (no special file made), the directories on the way their entries
// listed, made, removed and renamed, no file in them opened. A file made
// at the top of such a directory cannot be written then: the policy is
// set up again once it exists (readPrint), not before.
func addWritableAllBut(rs int, p *Policy, w string, handled uint64) error {
	root, err := openRoot(p, w)
	if err != nil {
		return err
	}
	root.Close() // what it grants is opened with no link followed too
	full := handled &^ makeSpecial
	grants, ancestors := allBut(w, p.Unreadable)
	for _, a := range ancestors {
		if err := addReadable(rs, a, full&^(llReadFile|llExecute|llWriteFile|llTruncate|llIoctlDev), handled); err != nil {
			return err
		}
	}
	for _, g := range grants {
		if err := addReadable(rs, g, full, handled); err != nil {
			return err
		}
	}
	return nil
}
