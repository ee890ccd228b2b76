//go:build darwin || freebsd

package sessionsock

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred returns the user at the other end of c: LOCAL_PEERCRED (which
// carries no pid).
func peerCred(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{UID: -1}, err
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return Peer{UID: -1}, err
	}
	if credErr != nil {
		return Peer{UID: -1}, credErr
	}
	return Peer{UID: int(cred.Uid)}, nil
}
