//go:build unix

package tmux

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"
)

// killTargets returns the process group led by pid as a kill(2) target, if
// any of it is left.
func killTargets(pid int) []int {
	if err := syscall.Kill(-pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		return []int{-pid}
	}
	return nil
}

// stopSession makes sure the processes of session sid (a pane's command and
// its children) are gone: SIGTERM now, SIGKILL after grace, then waits,
// all bounded by ctx. tmux has normally hung them up already.
func stopSession(ctx context.Context, sid int, grace time.Duration) error {
	if sid <= 0 {
		return nil
	}
	signal(sessionMembers(sid), syscall.SIGTERM)
	killAt := time.Now().Add(grace)
	for {
		members := sessionMembers(sid)
		if len(members) == 0 {
			return nil
		}
		if time.Now().After(killAt) {
			signal(members, syscall.SIGKILL)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return fmt.Errorf("processes of session %d still running: %w", sid, err)
		}
	}
}

func signal(targets []int, sig syscall.Signal) {
	for _, pid := range targets {
		_ = syscall.Kill(pid, sig)
	}
}

// waitGone waits until process pid has exited, sending SIGTERM after grace
// and SIGKILL after twice that, while pid still runs tmux.
func waitGone(ctx context.Context, pid int, grace time.Duration) error {
	if pid <= 0 {
		return nil
	}
	start := time.Now()
	var termed, killed bool
	for running(pid) {
		switch waited := time.Since(start); {
		case !termed && waited > grace && isTmux(pid):
			_ = syscall.Kill(pid, syscall.SIGTERM)
			termed = true
		case !killed && waited > 2*grace && isTmux(pid):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = true
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return fmt.Errorf("still running: %w", err)
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
