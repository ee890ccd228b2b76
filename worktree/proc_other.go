//go:build !unix

package worktree

import (
	"os/exec"
	"time"
)

func setProcessGroup(cmd *exec.Cmd) { cmd.WaitDelay = 5 * time.Second }

func killProcessGroup(*exec.Cmd) {}

// processAlive cannot tell on this platform, so it answers "alive": the
// sweep then never removes a worktree whose owner might still run.
func processAlive(pid int) bool { return pid > 0 }
