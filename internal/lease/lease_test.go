package lease

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A helper process holds a lease until it is killed: the test binary run
// again with leaseHelperEnv set.
const leaseHelperEnv = "COHORT_LEASE_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(leaseHelperEnv); path != "" {
		l, err := Acquire(context.Background(), path, Self("helper"), Options{})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		_ = l
		select {} // until killed
	}
	os.Exit(m.Run())
}

func holdInProcess(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaseHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("helper did not take the lease: %q, %v", line, err)
	}
	return cmd
}

// TestALeaseDiesWithAKilledProcess is the point of the package: a holder
// killed with SIGKILL leaves the lease free, and its record names it.
func TestALeaseDiesWithAKilledProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lead.lock")
	if st, _, err := Probe(path); err != nil || st != Missing {
		t.Fatalf("before: %v, %v; want missing", st, err)
	}
	cmd := holdInProcess(t, path)
	st, h, err := Probe(path)
	if err != nil || st != Held || h.PID != cmd.Process.Pid || h.Session != "helper" {
		t.Fatalf("while held: %v %+v %v; want held by pid %d", st, h, err, cmd.Process.Pid)
	}
	if _, err := Acquire(t.Context(), path, Self("me"), Options{Wait: 50 * time.Millisecond}); !errors.Is(err, ErrHeld) {
		t.Fatalf("Acquire of a held lease: %v; want ErrHeld", err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	st, h, err = Probe(path)
	if err != nil || st != Free || h.PID != cmd.Process.Pid {
		t.Fatalf("after SIGKILL: %v %+v %v; want free, recording the dead holder", st, h, err)
	}
	l, err := Acquire(t.Context(), path, Self("me"), Options{})
	if err != nil {
		t.Fatalf("take over: %v", err)
	}
	defer l.Release()
	if h, err := Record(path); err != nil || h.Session != "me" || h.PID != os.Getpid() {
		t.Fatalf("record after take-over: %+v, %v", h, err)
	}
}

func TestSharedLeasesCoexistAndBlockAnExclusiveOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	a, err := Acquire(t.Context(), path, Holder{}, Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(t.Context(), path, Holder{}, Options{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	if st, _, _ := Probe(path); st != Held {
		t.Fatalf("probe with two shared holders: %v", st)
	}
	if l, err := Try(path, Holder{}, Options{}); l != nil || err != nil {
		t.Fatalf("exclusive Try while shared holders: %v, %v", l, err)
	}
	a.Release()
	b.Release()
	b.Release() // twice is fine
	l, err := Try(path, Holder{}, Options{})
	if err != nil || l == nil {
		t.Fatalf("exclusive Try once free: %v, %v", l, err)
	}
	l.Release()
}

// TestATornRecordIsReportedNotFatal: a holder killed while writing its
// record leaves a partial line; Probe still answers from the lock and Record
// names the file.
func TestATornRecordIsReportedNotFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lead.lock")
	if err := os.WriteFile(path, []byte(`{"pid": 12`), 0o600); err != nil {
		t.Fatal(err)
	}
	st, h, err := Probe(path)
	if err != nil || st != Free || h != (Holder{}) {
		t.Fatalf("probe: %v %+v %v", st, h, err)
	}
	if _, err := Record(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Record: %v; want an error naming %s", err, path)
	}
}

// TestAcquireRelocksAFileReplacedWhileWaiting: a lease file deleted while a
// waiter waited is re-created and locked, never an unlinked inode.
func TestAcquireRelocksAFileReplacedWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.lock")
	first, err := Acquire(t.Context(), path, Self("a"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Lease, 1)
	go func() {
		l, err := Acquire(context.Background(), path, Self("b"), Options{Wait: 10 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- l
	}()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	first.Release()
	l := <-done
	if l == nil {
		return
	}
	defer l.Release()
	if st, _, _ := Probe(path); st != Held {
		t.Fatalf("the re-created file is %v; want held by the waiter", st)
	}
	if _, err := Acquire(t.Context(), filepath.Join(dir, "gone", "x.lock"), Holder{}, Options{}); err == nil {
		t.Fatal("Acquire in a missing directory succeeded")
	}
}
