//go:build linux

package sandbox

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
)

// TestHelperQuickExit runs Cohort's own programs that exit at once while
// another runs: the launcher then waits on every child at once and reaps
// such a command before its heap limit is set (Policy.DataLimit). It has
// nothing left to limit, and it started: its run must not fail ("limit the
// command's memory: no such process", a worktree Cohort could not remove).
func TestHelperQuickExit(t *testing.T) {
	e := newEnv(t, Config{})
	l, err := e.sb.Helper(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	up := &signalWriter{ch: make(chan struct{})}
	held := make(chan error, 1)
	go func() {
		_, err := proc.Run(ctx, proc.Command{Path: "/bin/sh", Args: []string{"-c", "echo up; exec sleep 60"}, Dir: e.project,
			Launcher: l, Timeout: time.Minute, Stdout: up})
		held <- err
	}()
	defer func() {
		cancel()
		<-held
	}()
	select {
	case <-up.ch:
	case err := <-held:
		t.Fatalf("the long command ended: %v", err)
	}
	for i := range 300 {
		res, err := proc.Output(t.Context(), proc.Command{Path: "/bin/true", Dir: e.project, Launcher: l, Timeout: 30 * time.Second}, 1<<10)
		if err != nil || res.Code != 0 {
			t.Fatalf("run %d of /bin/true: exit %d, %v", i, res.Code, err)
		}
	}
}

// signalWriter closes ch at its first write.
type signalWriter struct {
	once sync.Once
	ch   chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.ch) })
	return len(p), nil
}
