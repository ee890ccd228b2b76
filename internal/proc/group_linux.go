package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"

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

// groupAlive reports whether any process of group pgid is still running.
// Zombies do not count: they are dead, and an init that does not reap
// orphans would otherwise keep a group "alive" forever.
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
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		state, group, ok := readStat(name)
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// readStat returns the state and process group of /proc/<pid>/stat.
func readStat(pid string) (state byte, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false // gone meanwhile
	}
	// "pid (comm) state ppid pgrp ..."; comm may contain spaces and parens.
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
