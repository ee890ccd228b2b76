//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// killZero reports whether signal 0 reaches any member of group pgid.
// Zombies count as members here.
func killZero(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
