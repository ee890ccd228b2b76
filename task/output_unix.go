//go:build unix

package task

import "syscall"

// oNoFollow makes open fail on a symbolic link in the last path component.
const oNoFollow = syscall.O_NOFOLLOW
