//go:build linux

package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// killWait bounds how long a launcher without a pid namespace spends
// killing what is left under it before it exits.
const killWait = 3 * time.Second

// killDescendants kills every process under the launcher. Being their
// child subreaper, the launcher inherits what commands leave behind (a
// `cmd &` whose shell has exited, a daemon that double-forked, a process
// that left its group with setsid), so its children are all there is:
// each is killed, its own children come to the launcher as it exits, and
// the next round kills those, until none is left or the deadline passes.
// What escapes: a process another daemon started on a command's behalf
// (systemd-run, at, a tmux or ssh server that was running already), which
// was never under the launcher.
func killDescendants(deadline time.Time) {
	self := os.Getpid()
	for time.Now().Before(deadline) {
		live := childrenOf(self)
		if len(live) == 0 {
			return
		}
		var fds []unix.PollFd
		for _, pid := range live {
			// The pidfd first, so that a number reused after the kill is
			// never waited on.
			fd, err := unix.PidfdOpen(pid, 0)
			if err == nil {
				fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			} else {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		// A pidfd turns readable once its process has exited, which is
		// after its children were handed to us: the next round sees them.
		for i := range fds {
			for {
				left := time.Until(deadline)
				if left <= 0 {
					break
				}
				n, err := unix.Poll(fds[i:i+1], int(left.Milliseconds())+1)
				if err != unix.EINTR || n > 0 {
					break
				}
			}
			unix.Close(int(fds[i].Fd))
		}
	}
}

// childrenOf lists the live (not zombie) children of pid, from /proc.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 2 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		if ppid, err := strconv.Atoi(string(f[1])); err == nil && ppid == pid {
			out = append(out, child)
		}
	}
	return out
}
