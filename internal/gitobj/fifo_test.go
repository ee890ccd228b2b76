package gitobj

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	if err := syscall.Mkfifo(idx, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Has(objects, make([]byte, 20)); done <- err }()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Has with a FIFO as a pack index: no error; want one (the caller then cannot say, and hides the store)")
		}
	case <-ctx.Done():
		w, _ := os.OpenFile(idx, os.O_WRONLY, 0) // the blocked open has its reader
		w.Close()
		<-done
		t.Fatal("Has still waiting after 20 s on a FIFO pack index")
	}
}
