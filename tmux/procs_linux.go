package tmux

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// running reports whether process pid exists and is not a zombie. A pane's
// command that tmux has not reaped yet, or whose parent (an init that does
// not reap orphans) never will, is dead.
func running(pid int) bool {
	if pid <= 0 {
		return false
	}
	st, ok := readStat(strconv.Itoa(pid))
	return ok && st.state != 'Z' && st.state != 'X'
}

// sessionMembers returns the running processes of session sid: a pane's
// command is a session leader, and every process it starts stays in its
// session unless it calls setsid.
func sessionMembers(sid int) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return killTargets(sid)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return killTargets(sid)
	}
	var pids []int
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		st, ok := readStat(name)
		if ok && st.session == sid && st.state != 'Z' && st.state != 'X' {
			pid, _ := strconv.Atoi(name)
			pids = append(pids, pid)
		}
	}
	return pids
}

type procStat struct {
	state   byte
	session int
	comm    string
}

// readStat reads /proc/<pid>/stat: "pid (comm) state ppid pgrp session ...".
func readStat(pid string) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procStat{}, false // gone meanwhile
	}
	open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := bytes.Fields(data[end+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return procStat{}, false
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], session: sid, comm: string(data[open+1 : end])}, true
}

// isTmux reports whether pid runs tmux, before we signal what we believe
// is our server.
func isTmux(pid int) bool {
	st, ok := readStat(strconv.Itoa(pid))
	return ok && strings.HasPrefix(st.comm, "tmux")
}
