//go:build unix

package worktree

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup starts git in its own process group so that cancelling a
// call stops git and whatever it started (hooks, filters, its own
// subcommands): SIGTERM to the group on cancel, SIGKILL to the leader after
// WaitDelay, then SIGKILL to the group (killProcessGroup). Stdin is nil, i.e.
// /dev/null, so nothing ever waits on input.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = 5 * time.Second
}

// killProcessGroup kills what is left of a cancelled call's process group.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// processAlive reports whether a process with this pid exists. EPERM means
// it exists but belongs to someone else, which still counts as alive.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
