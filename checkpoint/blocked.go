package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

// A snapshot runs git on a working tree a model writes, and git opens
// some of the tree's files with a plain blocking open(2): each folder's
// .gitignore (ls-files --exclude-standard) and .gitattributes
// (update-index), and, for each folder holding a .git, that git dir's
// HEAD, commondir and config (to tell a nested repository). A FIFO there
// makes git wait for a writer that never comes. The sandbox lets no
// command make one in the tree (package sandbox, "Special files"), but
// one can come from elsewhere: the sandbox off, the user, a link into a
// command's TMPDIR. So:
//
//   - the scan that begins every snapshot (unchanged.go) looks for such a
//     file, and a root holding one is not handed to git at all: the
//     snapshot fails at once with a Blocked naming the file and what to
//     do, which the session reports once. Once the file is gone the next
//     turn's checkpoint takes the root again. A git link to a FIFO is
//     harmless: git opens these names without following links.
//   - what the scan cannot see (a root too large to scan, a file made
//     between the scan and git) runs into git's deadline (internal/safegit
//     kills its process group). A root whose git ran past its deadline is
//     stalled for the rest of the Store's life: later snapshots fail at
//     once with the same Blocked, naming the FIFOs and devices the last
//     scan saw, instead of waiting out the deadline turn after turn.

// gitOpens are the names git opens in every folder of a working tree.
var gitOpens = map[string]bool{".gitignore": true, ".gitattributes": true}

// specialMode reports whether a stat mode is a FIFO, a device or a socket.
func specialMode(mode uint32) bool {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO, unix.S_IFCHR, unix.S_IFBLK, unix.S_IFSOCK:
		return true
	}
	return false
}

// nestedBlocking names a file git would wait on when it looks at the
// repository nested at dir, "" when none (or when dir holds no
// repository git would take for one).
func nestedBlocking(dir string) string {
	l, err := gitrepo.Read(dir)
	if err != nil {
		return ""
	}
	return l.Blocking()
}

// Blocked is a root Cohort runs no git on: it holds a file git would wait
// on forever (Path), or git ran past its deadline there (Stalled).
type Blocked struct {
	Root string
	// Path is the file found; for a stall, Seen are the FIFOs and devices
	// the root's last scan saw (at most a few).
	Path    string
	Stalled bool
	Seen    []string
	Err     error // the deadline's error, for a stall
}

func (b *Blocked) Error() string {
	if !b.Stalled {
		return fmt.Sprintf("%s is not a regular file (a FIFO or device): git would wait on it forever, so Cohort runs no git on %s and takes no checkpoint of it until it is gone (remove it: rm %q)", b.Path, b.Root, b.Path)
	}
	seen := "; look for one with: find " + b.Root + " -type p"
	if len(b.Seen) > 0 {
		seen = "; the tree holds " + strings.Join(b.Seen, ", ") + ": remove what should not be there"
	}
	return fmt.Sprintf("git on %s did not finish (%v) and was stopped: Cohort takes no more checkpoints of it this session. A FIFO or device file git opens (a .gitignore, a .gitattributes, a nested repository's .git/HEAD) makes it wait forever%s, then start a new session", b.Root, b.Err, seen)
}

func (b *Blocked) Unwrap() error { return b.Err }

// blocked is the error for a root before git runs: a stall recorded
// earlier, or a file the scan found.
func (s *Store) blocked(root string, sc *scan) error {
	s.mu.Lock()
	stalled := s.stalled[root]
	s.mu.Unlock()
	if stalled != nil {
		return stalled
	}
	if sc != nil && sc.blocking != "" {
		return &Blocked{Root: root, Path: sc.blocking}
	}
	return nil
}

// stall records that git on root ran past its deadline (err) and returns
// the Blocked every later snapshot of root gets; other errors pass.
func (s *Store) stall(root string, sc *scan, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	b := &Blocked{Root: root, Stalled: true, Err: err}
	if sc != nil {
		for rel, k := range sc.entries {
			if specialMode(uint32(k.mode)) { // a scan's mode is stat's own
				b.Seen = append(b.Seen, filepath.Join(root, filepath.FromSlash(rel)))
			}
		}
		slices.Sort(b.Seen)
		if len(b.Seen) > 3 {
			b.Seen = append(b.Seen[:3], fmt.Sprintf("and %d more", len(b.Seen)-3))
		}
	}
	s.mu.Lock()
	if s.stalled == nil {
		s.stalled = map[string]*Blocked{}
	}
	s.stalled[root] = b
	s.mu.Unlock()
	return b
}
