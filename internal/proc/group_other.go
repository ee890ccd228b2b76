//go:build unix && !linux

package proc

import "errors"

// waitExited is unavailable here: the leader is reaped by Wait and the
// group cleaned up afterwards.
func waitExited(int) error { return errors.ErrUnsupported }

// groupAlive reports whether any member of group pgid can be signalled.
func groupAlive(pgid int) bool { return killZero(pgid) }
