package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/fifotest"
)

// A command in the sandbox may replace the repository's index with a
// FIFO: the next checkpoint neither hangs on it nor fails; it records the
// working tree and HEAD, says the index was not recorded and why, and a
// rewind to it leaves the index alone.
func TestCheckpointOfAnIndexThatIsAFIFO(t *testing.T) {
	dir, l := newRepo(t)
	s := newStore(t)
	index := filepath.Join(l.GitDir, "index")
	fifotest.Make(t, index)
	var cp *Checkpoint
	var err error
	fifotest.Within(t, 20*time.Second, []string{index}, func() {
		cp, err = s.Snapshot(t.Context(), "sess-1", "proj", Record{Turn: 1, Phase: Before}, []Root{{Dir: dir, Repo: l}})
	})
	if err != nil {
		t.Fatalf("checkpoint with the index a FIFO: %v; want it taken without the index", err)
	}
	st := cp.Root(dir)
	if st == nil || st.Tree == "" || st.Head == nil || st.Index != "" {
		t.Fatalf("checkpoint's root = %+v; want a tree and HEAD, no index", st)
	}
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], index) || !strings.Contains(st.Problems[0], "not a regular file") {
		t.Fatalf("problems = %q; want one naming %s as not a regular file", st.Problems, index)
	}
	changed, err := s.indexChanged(t.Context(), st, &RootState{Index: "0123"})
	if err != nil || changed {
		t.Errorf("a rewind to it would restore the index (changed %v, %v); want it left alone", changed, err)
	}
}

// HEAD, a loose ref and packed-refs are read by Cohort, not by git: a
// FIFO there does not hang a checkpoint, and a link to /proc/self/environ
// (Cohort's API key) is not taken for a commit id that the checkpoint's
// record, and a rewind's listing, would show.
func TestReadHeadRefusesWhatIsNotAGitFile(t *testing.T) {
	gitDir := t.TempDir()
	head := filepath.Join(gitDir, "HEAD")
	if err := os.Symlink("/proc/self/environ", head); err != nil {
		t.Fatal(err)
	}
	if h := readHead(gitDir, gitDir); h != nil {
		t.Errorf("HEAD linked to /proc/self/environ: readHead = %+v; want nil", h)
	}
	os.Remove(head)
	write(t, gitDir, "HEAD", "ref: refs/heads/main\n", 0o644)
	ref := filepath.Join(gitDir, "refs", "heads", "main")
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		t.Fatal(err)
	}
	fifotest.Make(t, ref)
	packed := filepath.Join(gitDir, "packed-refs")
	fifotest.Make(t, packed)
	var h *Head
	fifotest.Within(t, 10*time.Second, []string{ref, packed}, func() { h = readHead(gitDir, gitDir) })
	if h != nil {
		t.Errorf("a FIFO as the branch's ref: readHead = %+v; want nil", h)
	}
	os.Remove(ref)
	fifotest.Within(t, 10*time.Second, []string{packed}, func() { h = readHead(gitDir, gitDir) })
	if h != nil {
		t.Errorf("a FIFO as packed-refs: readHead = %+v; want nil", h)
	}
	os.Remove(packed)
	write(t, gitDir, "refs/heads/main", "abc123\n", 0o644)
	if h := readHead(gitDir, gitDir); h == nil || h.Commit != "abc123" || h.Ref != "refs/heads/main" {
		t.Errorf("a plain ref: readHead = %+v; want main at abc123", h)
	}
}
