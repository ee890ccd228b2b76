//go:build unix && !linux

package tmux

import (
	"errors"
	"syscall"
)

// running reports whether process pid can be signalled (zombies included:
// without /proc we cannot tell them apart).
func running(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// sessionMembers returns the process group of the session's leader, the
// most we can find without /proc.
func sessionMembers(sid int) []int { return killTargets(sid) }

// isTmux cannot check the name without /proc; the pid came from the server
// itself moments ago.
func isTmux(int) bool { return true }
