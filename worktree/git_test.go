package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHungGitIsStopped runs a "git" that hangs with a child of its own:
// the call ends with the deadline and the whole process group is killed.
func TestHungGitIsStopped(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("inspects /proc")
	}
	dir := t.TempDir()
	childPID := filepath.Join(dir, "child.pid")
	script := "#!/bin/sh\ncase \"$*\" in *version*) echo 'git version 2.40.0'; exit 0;; esac\n" +
		"sleep 600 &\necho $! > '" + childPID + "'\nwait\n"
	fake := filepath.Join(dir, "git")
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	m, err := New(t.Context(), Config{Dir: r.dir, Git: fake, Env: hermeticEnv(t), CommandTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(t.Context(), "hung", Owner{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Create with a hanging git = %v; want the deadline error", err)
	}
	data, err := os.ReadFile(childPID)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	// The sleep got SIGTERM with its group; wait (bounded) for it to die.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for running(pid) {
		if sleep(ctx, 20*time.Millisecond) != nil {
			t.Fatalf("git's child %d still runs after the call was cancelled", pid)
		}
	}
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}
