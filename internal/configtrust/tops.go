package configtrust

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// Tracked are the configuration files at the top of a working directory
// whose content is recorded at each session's start and end (see the
// package doc, "Top-level files"): the names there a sandboxed command
// can create.
var Tracked = []string{".mcp.json"}

// topsFile is trust/tops.json (in each registry of Places): per frozen root, the state of
// each tracked file when Cohort last looked, and the sessions that may
// write the root now.
type topsFile struct {
	Roots map[string]*topRoot `json:"roots,omitempty"`
}

type topRoot struct {
	Files map[string]topState `json:"files,omitempty"`
	Open  []openSession       `json:"open,omitempty"`
}

// topState is a tracked file as Cohort last saw it.
type topState struct {
	// SHA256 of the content; empty when the file did not exist.
	SHA256 string `json:"sha256,omitempty"`
	// Written says this content appeared while a session could write
	// the root: a model may have written it.
	Written bool      `json:"written,omitempty"`
	At      time.Time `json:"at"`
}

// openSession is a session that began on a root and has not recorded
// its end (running, or killed).
type openSession struct {
	ID  string `json:"id"`
	PID int    `json:"pid"`
	// Start is the process's start time in clock ticks since boot, from
	// /proc/PID/stat (a reused PID has another); empty where unknown.
	Start string    `json:"start,omitempty"`
	Since time.Time `json:"since"`
}

// fileDigest is the digest of path's content, "" when it does not exist
// (or is not a regular file a loader would read).
func fileDigest(path string) string {
	data, err := ownread.Config(path, 0)
	if err != nil {
		return ""
	}
	return digest(data)
}

// Begin records that session id, this process, may write the frozen
// roots from now on: each tracked file's state is brought up to date
// first (a change since the last record, made while no session could
// write the root, is the person's; one made while a session was open,
// or after a session ended without a record, is not), then the session
// is listed as open. Sessions listed whose process is gone are dropped.
// End records the session's end.
func Begin(ctx context.Context, at Places, id string, roots []string, now time.Time) error {
	self := openSession{ID: id, PID: os.Getpid(), Start: procStart(os.Getpid()), Since: now.UTC().Truncate(time.Second)}
	return updateTops(ctx, at, roots, now, func(r *topRoot, path string) {
		suspect := false
		r.Open = slices.DeleteFunc(r.Open, func(o openSession) bool {
			if (o.ID == id && o.PID == self.PID) || !alive(o) {
				suspect = true // killed: what it wrote after its last record is not known
				return true
			}
			suspect = true // running: its model may be writing now
			return false
		})
		refresh(r, path, suspect, now)
		r.Open = append(r.Open, self)
	})
}

// End records that session id no longer writes the roots: a tracked
// file that changed since its last record was changed while the session
// could write it.
func End(ctx context.Context, at Places, id string, roots []string, now time.Time) error {
	pid := os.Getpid()
	return updateTops(ctx, at, roots, now, func(r *topRoot, path string) {
		refresh(r, path, true, now)
		r.Open = slices.DeleteFunc(r.Open, func(o openSession) bool { return o.ID == id && o.PID == pid })
	})
}

// refresh brings root path's tracked files up to date: one whose content
// differs from its record gets the new content, Written when suspect.
// A file never recorded is taken as it stands (its history is not
// known; see the package doc).
func refresh(r *topRoot, path string, suspect bool, now time.Time) {
	if r.Files == nil {
		r.Files = map[string]topState{}
	}
	for _, name := range Tracked {
		h := fileDigest(filepath.Join(path, name))
		st, ok := r.Files[name]
		if ok && st.SHA256 == h {
			continue
		}
		r.Files[name] = topState{SHA256: h, Written: ok && suspect, At: now.UTC().Truncate(time.Second)}
	}
}

// updateTops runs fn on each root's record in every registry of at,
// under its lock.
func updateTops(ctx context.Context, at Places, roots []string, now time.Time, fn func(r *topRoot, path string)) error {
	if len(roots) == 0 {
		return nil
	}
	return at.each(func(dir string) error { return updateTopsIn(ctx, dir, roots, fn) })
}

func updateTopsIn(ctx context.Context, dir string, roots []string, fn func(r *topRoot, path string)) error {
	return update(ctx, dir, "tops.json", func(f *topsFile) bool {
		if f.Roots == nil {
			f.Roots = map[string]*topRoot{}
		}
		for _, p := range roots {
			if p == "" || !filepath.IsAbs(p) {
				continue
			}
			p = resolve(p)
			r := f.Roots[p]
			if r == nil {
				r = &topRoot{}
				f.Roots[p] = r
			}
			fn(r, p)
		}
		return true
	})
}

// topVerdict is nil when data, the content of root's tracked file name,
// may be obeyed: approved, or, in every registry, recorded as the
// person's or changed since the last record while no session could
// write the root. It reads the records afresh: a session's own model may
// write the file after the session read its Book.
func (b *Book) topVerdict(root, name, file string, data []byte) *Verdict {
	if a, ok := b.approved[resolve(file)]; ok && a.SHA256 == digest(data) {
		return nil
	}
	for _, dir := range b.dirs {
		if v := topVerdictIn(dir, root, name, file, data); v != nil {
			return v
		}
	}
	return nil
}

// topVerdictIn is topVerdict by the record in the registry directory dir.
func topVerdictIn(dir, root, name, file string, data []byte) *Verdict {
	path := filepath.Join(dir, "tops.json")
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var f topsFile
	if err == nil {
		err = json.Unmarshal(raw, &f)
	}
	if err != nil {
		return &Verdict{File: file, Broken: fmt.Sprintf("Cohort's record of what sessions left at the top of projects, %s, cannot be read (%v): fix it", path, err)}
	}
	r := f.Roots[root]
	if r == nil {
		return nil
	}
	st, ok := r.Files[name]
	h := digest(data)
	switch {
	case !ok:
		return nil
	case st.SHA256 == h && !st.Written:
		return nil
	case st.SHA256 == h:
		return &Verdict{File: file, Root: root, Since: st.At, top: "appeared"}
	case len(r.Open) == 0:
		return nil // changed while no session could write the root: the person's
	default:
		return &Verdict{File: file, Root: root, Since: st.At, top: "changed"}
	}
}

// alive reports whether o's process still runs (the same process: its
// start time matches where it is known).
func alive(o openSession) bool {
	if o.PID <= 0 {
		return false
	}
	if s := procStart(o.PID); s != "" || o.Start != "" {
		return s == o.Start
	}
	err := syscall.Kill(o.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// procStart is field 22 of /proc/PID/stat (start time in clock ticks
// since boot), "" where it cannot be read.
func procStart(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ""
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 20 {
		return ""
	}
	return string(f[19])
}
