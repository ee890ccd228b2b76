// Package fifotest helps a test show that code does not wait on a FIFO
// planted under a file's name: Within runs the code under a deadline and,
// if it is still running then, lets the blocked read end (a writer that
// opens and closes each FIFO) before failing, so a test that finds the
// hang fails instead of hanging itself or leaking the goroutine.
package fifotest

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// Make makes a FIFO at path, removing what is there; it skips the test
// where FIFOs cannot be made.
func Make(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
}

// Within runs f and fails the test if f has not returned after d, once a
// writer for each of fifos has let it return.
func Within(t testing.TB, d time.Duration, fifos []string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range fifos {
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		select {
		case <-done:
			t.Fatalf("still waiting after %v: a FIFO among %v was read as a file", d, fifos)
		case <-tick.C:
		}
	}
}
