package bgsession

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// StopWait is how long Stop waits for a session to end after SIGTERM
// before it sends SIGKILL.
const StopWait = 10 * time.Second

// ErrNotRunning: the session's process is not running (it ended, or its
// pid now belongs to another process).
var ErrNotRunning = errors.New("the session is not running")

// Stop ends the session of rec: SIGTERM to its process group, then,
// if it has not ended within StopWait, SIGKILL; with kill, SIGKILL at once.
// It returns once the process has gone (or ctx ends) and records the
// state as stopped when the session did not record it itself.
func (g *Registry) Stop(ctx context.Context, rec Record, kill bool) error {
	if !running(rec) {
		return fmt.Errorf("session %s: %w", rec.ID, ErrNotRunning)
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := signalGroup(rec, sig); err != nil {
		return err
	}
	if !kill && !waitGone(ctx, rec, StopWait) {
		if err := signalGroup(rec, syscall.SIGKILL); err != nil {
			return err
		}
	}
	if !waitGone(ctx, rec, StopWait) {
		return fmt.Errorf("session %s (pid %d) has not ended: %w", rec.ID, rec.PID, cmpErr(ctx))
	}
	cur, err := g.Read(rec.ID)
	if err != nil {
		return err
	}
	if cur.State != StateStopped {
		cur.State, cur.Status = StateStopped, ""
		return g.Write(cur)
	}
	return nil
}

func cmpErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.New("timed out")
}

// signalGroup signals rec's process group (the session leads its own),
// after checking the pid still belongs to it.
func signalGroup(rec Record, sig syscall.Signal) error {
	if !running(rec) {
		return nil
	}
	if err := syscall.Kill(-rec.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("session %s: signal pid %d: %w", rec.ID, rec.PID, err)
	}
	return nil
}

// waitGone waits up to d for rec's process to end. A process gives no
// notice to a non-parent, so this looks every 20 ms.
func waitGone(ctx context.Context, rec Record, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for running(rec) {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}
