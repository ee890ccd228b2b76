package proc

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLeaderRefSignalsGroupAfterReap: the pidfd still reaches the group once
// its leader is reaped, and reports an empty group as ESRCH, which is what
// lets Wait skip reading /proc in the common case.
func TestLeaderRefSignalsGroupAfterReap(t *testing.T) {
	if !pidfdGroups() {
		t.Skip("this kernel cannot signal a process group through a pidfd (Linux 6.9+)")
	}
	t.Parallel()
	start := func(script string) (*exec.Cmd, leaderRef, *bufio.Reader) {
		cmd := exec.Command("sh", "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ref := openLeader(cmd.Process.Pid)
		if !ref.ok() {
			t.Fatal("openLeader failed on our own child")
		}
		t.Cleanup(ref.close)
		return cmd, ref, bufio.NewReader(out)
	}

	// Alone in its group: once reaped, nothing is left.
	cmd, ref, _ := start("exit 0")
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := ref.signalGroup(0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("empty group: signal 0 gave %v, want ESRCH", err)
	}

	// A background child outlives the shell: the reaped leader's pidfd
	// still reaches it.
	cmd, ref, out := start("sleep 300 & echo $!")
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := ref.signalGroup(0); err != nil {
		t.Fatalf("group with a live member: signal 0 gave %v", err)
	}
	if err := ref.signalGroup(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL through the pidfd: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for running(child) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d survived SIGKILL to its group", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkGroupScan is the fallback group check, a read of every
// /proc/<pid>/stat, which kernels before 6.9 pay after every command
// (procs/op is the number of processes on the machine at the time).
func BenchmarkGroupScan(b *testing.B) {
	names, err := os.ReadDir("/proc")
	if err != nil {
		b.Skip(err)
	}
	procs := 0
	for _, n := range names {
		if n.Name()[0] >= '0' && n.Name()[0] <= '9' {
			procs++
		}
	}
	for b.Loop() {
		if groupAlive(1 << 30) {
			b.Fatal("a group that cannot exist is alive")
		}
	}
	b.ReportMetric(float64(procs), "procs/op")
}
