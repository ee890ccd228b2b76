package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitExited blocks until process pid has exited, leaving it unreaped (a
// zombie) so that its pid, which is also the group id, stays reserved.
func waitExited(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// pidfdGroups reports whether this kernel signals a process group through a
// pidfd (PIDFD_SIGNAL_PROCESS_GROUP, Linux 6.9). It asks for signal 0, which
// only checks, to the group our own pid leads: ESRCH when we lead none, which
// proves the flag known as well as success does; an older kernel refuses the
// flag with EINVAL.
var pidfdGroups = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	err = unix.PidfdSendSignal(fd, 0, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
	return err == nil || errors.Is(err, unix.ESRCH)
})

// leaderRef is a pidfd of a group leader. Process-group signalling through
// it reaches the group whose id is the leader's pid, by the kernel's
// identity of that pid rather than by number: it stays right after the
// leader is reaped, and a new process that gets the number later is not
// reached. fd is -1 when the kernel lacks it.
type leaderRef struct{ fd int }

// openLeader returns a reference to pid, which must be our unreaped child.
func openLeader(pid int) leaderRef {
	if !pidfdGroups() {
		return leaderRef{fd: -1}
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return leaderRef{fd: -1}
	}
	return leaderRef{fd: fd}
}

func (r leaderRef) ok() bool { return r.fd >= 0 }

// signalGroup sends sig (0 only checks) to every member of the leader's
// group, zombies included. ESRCH means the group has no member left.
func (r leaderRef) signalGroup(sig syscall.Signal) error {
	return unix.PidfdSendSignal(r.fd, sig, nil, unix.PIDFD_SIGNAL_PROCESS_GROUP)
}

func (r leaderRef) close() {
	if r.fd >= 0 {
		unix.Close(r.fd)
	}
}

// groupAlive reports whether any process of group pgid is still running.
// Zombies do not count: they are dead, and an init that does not reap
// orphans would otherwise keep a group "alive" forever. It reads the stat
// file of every process; Process.groupAlive avoids it where it can.
func groupAlive(pgid int) bool {
	dir, err := os.Open("/proc")
	if err != nil {
		return killZero(pgid)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return killZero(pgid)
	}
	var buf [statPrefix]byte
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		state, group, ok := readStatInto(name, buf[:])
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// statPrefix is how much of a stat file readStat reads: "pid (comm) state
// ppid pgrp" fits, as comm is at most 16 bytes.
const statPrefix = 256

// readStat returns the state and process group of /proc/<pid>/stat.
func readStat(pid string) (state byte, pgrp int, ok bool) {
	var buf [statPrefix]byte
	return readStatInto(pid, buf[:])
}

// readStatInto is readStat reading into buf with three system calls (os.ReadFile
// makes twice as many), as a scan of /proc does it once per process.
func readStatInto(pid string, buf []byte) (state byte, pgrp int, ok bool) {
	fd, err := unix.Open("/proc/"+pid+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, false // gone meanwhile
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return 0, 0, false
	}
	data := buf[:n]
	// "pid (comm) state ppid pgrp ..."; comm may contain spaces and parens,
	// and nothing after it does.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}

// dieWithParent asks the kernel to SIGKILL the child when the thread that
// started it exits. Go's runtime threads live as long as the process
// unless a goroutine locked to one returns, so in practice it fires when
// Cohort dies.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
