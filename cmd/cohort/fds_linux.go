package main

import "golang.org/x/sys/unix"

// closeInheritedFds marks every descriptor Cohort inherited beyond its
// standard streams close-on-exec: nothing Cohort's parent left open may
// reach the programs Cohort starts (hooks, MCP servers, Bash commands).
// Go opens its own descriptors close-on-exec already.
func closeInheritedFds() { _ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) }
