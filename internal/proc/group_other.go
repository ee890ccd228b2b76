//go:build unix && !linux

package proc

import (
	"errors"
	"syscall"
)

// waitExited is unavailable here: the leader is reaped by Wait and the
// group cleaned up afterwards.
func waitExited(int) error { return errors.ErrUnsupported }

// groupAlive reports whether any member of group pgid can be signalled.
func groupAlive(pgid int) bool { return killZero(pgid) }

// leaderRef is unavailable here: groups are signalled by number.
type leaderRef struct{ fd int }

// pidfdGroups: no pidfds here, so no Launcher either.
func pidfdGroups() bool { return false }

func openLeader(int) leaderRef                     { return leaderRef{} }
func (leaderRef) ok() bool                         { return false }
func (leaderRef) signalGroup(syscall.Signal) error { return errors.ErrUnsupported }
func (leaderRef) close()                           {}

// dieWithParent has no kernel support here; the child notices its parent's
// death by the pipes it reads closing.
func dieWithParent(*syscall.SysProcAttr) {}
