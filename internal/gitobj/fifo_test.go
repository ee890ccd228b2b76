package gitobj

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/fifotest"
)

// A FIFO named like a pack index (a command in the sandbox may make one
// in a repository it writes) is an error, at once, not a wait for a
// writer: sandbox.Config asks Has at a session's start.
func TestHasRefusesAFIFOPackIndex(t *testing.T) {
	objects := t.TempDir()
	idx := filepath.Join(objects, "pack", "pack-1.idx")
	if err := os.MkdirAll(filepath.Dir(idx), 0o755); err != nil {
		t.Fatal(err)
	}
	fifotest.Make(t, idx)
	var err error
	fifotest.Within(t, 20*time.Second, []string{idx}, func() { _, err = Has(objects, make([]byte, 20)) })
	if err == nil {
		t.Error("Has with a FIFO as a pack index: no error; want one (the caller then cannot say, and hides the store)")
	}
}
