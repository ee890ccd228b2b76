//go:build unix

package trace

import "syscall"

// oFlags make opening the trace fail on a symbolic link in the last path
// component and never block on a FIFO.
const oFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// isLinkError reports the error open returns for a link it would not
// follow.
func isLinkError(err error) bool { return err == syscall.ELOOP }
