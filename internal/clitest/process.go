package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// GroupMembers lists the processes of group pgid that are not zombies.
// (Orphaned zombies belong to init, which reaps them in its own time; they
// are dead.)
func GroupMembers(pgid int) []int {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			out = append(out, pid)
		}
	}
	return out
}

// WaitForPID waits up to 30 s for path to hold a pid and a newline.
func WaitForPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// WaitFor polls cond every 20 ms until it holds or d has passed.
func WaitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// ShortHome points COHORT_HOME at a short path: Unix socket paths (the
// session socket, the private tmux server) must fit in 107 bytes.
func (h *Harness) ShortHome() {
	h.T.Helper()
	dir, err := os.MkdirTemp("", "ch")
	if err != nil {
		h.T.Fatal(err)
	}
	h.T.Cleanup(func() { os.RemoveAll(dir) })
	h.Vars["COHORT_HOME"] = dir
}

// NeedTmux skips t when tmux is not installed.
func NeedTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (CI installs it; .ci/run does)")
	}
}

// ProcessRunning reports whether pid runs and is not a zombie.
func ProcessRunning(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
