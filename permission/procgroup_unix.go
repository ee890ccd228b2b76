//go:build unix

package permission

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in its own process group and makes cancellation send
// SIGTERM to the whole group (exec sends SIGKILL after WaitDelay).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
}

// killGroup sends SIGKILL to what is left of cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
