package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/fifotest"
	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// A FIFO git would open in the tree (a folder's .gitignore or
// .gitattributes, a nested repository's HEAD or config, through a .git
// file too) is found by the snapshot's scan: no git runs, the snapshot
// fails at once naming the file and what to do, and once it is gone the
// next one is taken.
func TestSnapshotRunsNoGitOnAFIFOItWouldOpen(t *testing.T) {
	for _, plant := range []string{"sub/.gitignore", "notes/.gitattributes", "n/.git/HEAD", "n/.git/config", "g/.git file"} {
		t.Run(strings.Fields(plant)[0], func(t *testing.T) {
			dir, l := newRepo(t)
			s := newStore(t)
			fifo := filepath.Join(dir, plant)
			if strings.HasPrefix(plant, "n/") {
				for _, d := range []string{"n/.git/objects", "n/.git/refs"} {
					os.MkdirAll(filepath.Join(dir, d), 0o755)
				}
				write(t, dir, "n/.git/HEAD", "ref: refs/heads/main\n", 0o644)
			}
			if strings.HasPrefix(plant, "g/") {
				// A .git file naming a git dir elsewhere (a command's TMPDIR,
				// where FIFOs may be made) whose HEAD is a FIFO.
				gd := filepath.Join(t.TempDir(), "gd")
				for _, d := range []string{"objects", "refs"} {
					os.MkdirAll(filepath.Join(gd, d), 0o755)
				}
				write(t, dir, "g/.git", "gitdir: "+gd+"\n", 0o644)
				fifo = filepath.Join(gd, "HEAD")
			}
			os.MkdirAll(filepath.Dir(fifo), 0o755)
			fifotest.Make(t, fifo)
			var err error
			start := time.Now()
			fifotest.Within(t, 20*time.Second, []string{fifo}, func() {
				_, err = s.Snapshot(t.Context(), "sess-1", "proj", Record{Turn: 1, Phase: Before}, []Root{{Dir: dir, Repo: l}})
			})
			var b *Blocked
			if !errors.As(err, &b) || b.Path != fifo || !strings.Contains(err.Error(), "rm ") {
				t.Fatalf("snapshot with %s a FIFO: %v; want a Blocked naming it and saying to remove it", plant, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the refusal took %v: git ran", d)
			}
			os.Remove(fifo)
			if _, err := s.Snapshot(t.Context(), "sess-1", "proj", Record{Turn: 2, Phase: Before}, []Root{{Dir: dir, Repo: l}}); err != nil {
				t.Errorf("the FIFO removed, the next snapshot: %v", err)
			}
		})
	}
}

// A FIFO the scan does not look for (the repository's own info/exclude,
// which only the user or an unsandboxed program can make one) runs into
// git's deadline: git is stopped, and later snapshots of the root fail at
// once with the same report instead of waiting out the deadline again.
func TestSnapshotStallIsReportedOnceNotWaitedAgain(t *testing.T) {
	dir, l := newRepo(t)
	s, err := Open(t.Context(), Config{Dir: filepath.Join(t.TempDir(), "checkpoints"), Git: &safegit.Runner{Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(l.GitDir, "info", "exclude")
	os.MkdirAll(filepath.Dir(fifo), 0o755)
	fifotest.Make(t, fifo)
	write(t, dir, "sub/fifo-neighbour.txt", "x\n", 0o644)
	var first, second error
	fifotest.Within(t, 30*time.Second, []string{fifo}, func() {
		first = snapErr(t, s, dir, l, 1)
		start := time.Now()
		second = snapErr(t, s, dir, l, 2)
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("the second snapshot took %v: it waited on git again", d)
		}
	})
	var b *Blocked
	if !errors.As(first, &b) || !b.Stalled || !strings.Contains(first.Error(), "new session") {
		t.Fatalf("first snapshot: %v; want a stall report", first)
	}
	if second == nil || second.Error() != first.Error() {
		t.Errorf("second snapshot: %v; want the same report", second)
	}
}

func snapErr(t *testing.T, s *Store, dir string, l gitrepo.Layout, turn int) error {
	t.Helper()
	_, err := s.Snapshot(t.Context(), "sess-1", "proj", Record{Turn: turn, Phase: Before}, []Root{{Dir: dir, Repo: l}})
	return err
}
