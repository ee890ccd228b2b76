package dream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// t0 is the test clock's "now".
var t0 = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// world is a project's memory dir and transcripts dir.
type world struct {
	t         *testing.T
	mem, proj string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, mem: filepath.Join(root, "projects", "p", "memory"), proj: filepath.Join(root, "projects", "p")}
	if err := os.MkdirAll(w.mem, 0o700); err != nil {
		t.Fatal(err)
	}
	return w
}

// session writes a transcript touched at mod.
func (w *world) session(id string, mod time.Time) {
	w.t.Helper()
	p := filepath.Join(w.proj, id+".jsonl")
	if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		w.t.Fatal(err)
	}
}

// consolidated leaves a lock file with content, last touched at mod.
func (w *world) consolidated(mod time.Time, content string) {
	w.t.Helper()
	if err := writeLock(filepath.Join(w.mem, LockName), content, mod); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) lockState() lockState {
	w.t.Helper()
	st, err := readLock(filepath.Join(w.mem, LockName))
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

// clock is an injected, settable clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func (w *world) scheduler(c *clock, gates Gates, pid int, alive func(int) bool) *Scheduler {
	return NewScheduler(Config{MemoryDir: w.mem, ProjectDir: w.proj, SessionID: "current", Gates: gates,
		Now: c.Now, PID: pid, Alive: alive})
}

func blockedBy(t *testing.T, err error, gate string) {
	t.Helper()
	var b *Blocked
	if !errors.As(err, &b) || b.Gate != gate {
		t.Fatalf("error %v, want blocked by the %s gate", err, gate)
	}
}

var on = Gates{Enabled: true, MinHours: 24, MinSessions: 5}

func alive(int) bool { return true }

// TestGatesBlockAndPass: each gate of the chain, in order, blocks while its
// condition fails and lets the chain through once it holds.
func TestGatesBlockAndPass(t *testing.T) {
	t.Parallel()
	t.Run("enabled", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		for i := range 6 {
			w.session(fmt.Sprint("s", i), t0.Add(-time.Hour))
		}
		c := &clock{t0}
		_, err := w.scheduler(c, Gates{MinHours: 24, MinSessions: 5}, 100, alive).Try(t.Context())
		blockedBy(t, err, GateDisabled)
		tk, err := w.scheduler(c, on, 100, alive).Try(t.Context())
		if err != nil || len(tk.Sessions) != 6 {
			t.Fatalf("enabled: %v %+v", err, tk)
		}
	})
	t.Run("time", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.consolidated(t0.Add(-23*time.Hour), "")
		for i := range 6 {
			w.session(fmt.Sprint("s", i), t0.Add(-time.Hour))
		}
		c := &clock{t0}
		s := w.scheduler(c, on, 100, alive)
		_, err := s.Try(t.Context())
		blockedBy(t, err, GateTime)
		c.now = t0.Add(time.Hour)
		if _, err := s.Try(t.Context()); err != nil {
			t.Fatalf("24 h after: %v", err)
		}
	})
	t.Run("throttle and sessions", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.consolidated(t0.Add(-48*time.Hour), "")
		w.session("old", t0.Add(-72*time.Hour)) // before the last consolidation
		w.session("current", t0)                // the asking session
		for i := range 4 {
			w.session(fmt.Sprint("s", i), t0.Add(-time.Hour))
		}
		c := &clock{t0}
		s := w.scheduler(c, on, 100, alive)
		_, err := s.Try(t.Context())
		blockedBy(t, err, GateSessions) // 4: neither "old" nor "current" counts
		w.session("s4", t0.Add(time.Minute))
		c.now = t0.Add(9 * time.Minute)
		_, err = s.Try(t.Context())
		blockedBy(t, err, GateThrottle) // five now, but the last scan was 9 min ago
		c.now = t0.Add(10 * time.Minute)
		tk, err := s.Try(t.Context())
		if err != nil {
			t.Fatalf("after the throttle: %v", err)
		}
		if got := strings.Join(tk.Sessions, ","); got != "s4,s0,s1,s2,s3" {
			t.Errorf("sessions %s, want the five touched since, newest first", got)
		}
	})
	t.Run("lock", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		for i := range 5 {
			w.session(fmt.Sprint("s", i), t0.Add(-time.Hour))
		}
		c := &clock{t0}
		first, err := w.scheduler(c, Gates{Enabled: true, MinSessions: 5}, 100, alive).Try(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// The held lock's mtime already stops the earlier gates of a
		// scheduler that needs sessions; one that needs none reaches the
		// lock itself.
		_, err = w.scheduler(c, Gates{Enabled: true, MinSessions: 5}, 200, alive).Try(t.Context())
		blockedBy(t, err, GateSessions)
		_, err = w.scheduler(c, Gates{Enabled: true}, 200, alive).Try(t.Context())
		blockedBy(t, err, GateLock)
		if err := first.Lock.Commit(t.Context(), t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if st := w.lockState(); st.pid != 0 || !st.mtime.Equal(t0.Add(time.Minute)) {
			t.Errorf("after Commit: %+v, want no holder and the commit time", st)
		}
	})
}

// TestRollbackRestoresTheTime: a failed dream's lock goes back to its
// earlier mtime (or away, when there was none), so the time gate lets the
// next check through.
func TestRollbackRestoresTheTime(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for i := range 5 {
		w.session(fmt.Sprint("s", i), t0.Add(-time.Hour))
	}
	c := &clock{t0}
	s := w.scheduler(c, Gates{Enabled: true, MinSessions: 5}, 100, alive)
	tk, err := s.Force(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tk.Lock.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(w.mem, LockName)); !os.IsNotExist(err) {
		t.Fatalf("a first dream rolled back left its lock: %v", err)
	}
	prior := t0.Add(-30 * time.Hour)
	w.consolidated(prior, "")
	tk, err = s.Force(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st := w.lockState(); st.pid != 100 || !st.mtime.Equal(t0) {
		t.Fatalf("held: %+v", st)
	}
	if err := tk.Lock.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := w.lockState(); st.pid != 0 || !st.mtime.Equal(prior) {
		t.Fatalf("rolled back: %+v, want no holder and %s", st, prior)
	}
}

// TestStaleLockReclaimed: a lock whose PID is dead is taken over at once;
// one whose PID lives only after an hour. A holder taken over leaves the
// new holder's lock alone when it ends.
func TestStaleLockReclaimed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dead := func(pid int) bool { return pid != 4242 }
	c := &clock{t0}
	w.consolidated(t0.Add(-time.Minute), "4242")
	tk, err := w.scheduler(c, on, 100, dead).Force(t.Context())
	if err != nil {
		t.Fatalf("a dead holder's lock: %v", err)
	}
	if st := w.lockState(); st.pid != 100 {
		t.Fatalf("lock %+v, want ours", st)
	}
	// A live holder: refused within the hour, reclaimed after it.
	_, err = w.scheduler(c, on, 200, alive).Force(t.Context())
	blockedBy(t, err, GateLock)
	c.now = t0.Add(time.Hour)
	late, err := w.scheduler(c, on, 200, alive).Force(t.Context())
	if err != nil {
		t.Fatalf("a stale lock: %v", err)
	}
	if err := tk.Lock.Rollback(t.Context()); err == nil {
		t.Fatal("the taken-over holder rolled back a lock it no longer holds")
	}
	if st := w.lockState(); st.pid != 200 {
		t.Fatalf("lock %+v after the old holder ended, want 200's", st)
	}
	if err := late.Lock.Commit(t.Context(), c.now); err != nil {
		t.Fatal(err)
	}
}

// TestRealProcessAlive: the default liveness check sees this process and
// not a reaped child.
func TestRealProcessAlive(t *testing.T) {
	t.Parallel()
	if !processAlive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true binary")
	}
	if processAlive(cmd.Process.Pid) {
		t.Skip("the pid was reused")
	}
}

// helperEnv makes the test binary a racer (TestMain): it runs the gate
// chain on the memory dir named by the variable, says "won" or "lost", and
// holds what it won until its stdin closes.
const helperEnv = "DREAM_TEST_RACER"

func racer(dir string) int {
	proj := filepath.Dir(dir)
	s := NewScheduler(Config{MemoryDir: dir, ProjectDir: proj, SessionID: "racer-" + strconv.Itoa(os.Getpid()),
		Gates: Gates{Enabled: true, MinHours: 24, MinSessions: 1}})
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil { // go
		return 2
	}
	tk, err := s.Try(context.Background())
	if err != nil {
		fmt.Println("lost:", err)
		return 0
	}
	fmt.Println("won")
	_, _ = in.ReadString('\n') // hold until told
	if err := tk.Lock.Commit(context.Background(), time.Now()); err != nil {
		fmt.Println("commit:", err)
		return 1
	}
	return 0
}

// TestRacingProcesses: four processes that find every gate open run the
// chain at once; exactly one takes the lock, and the others are told which
// gate stopped them.
func TestRacingProcesses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.session("s0", time.Now().Add(-time.Hour))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	type proc struct {
		cmd *exec.Cmd
		in  *os.File
		out *bufio.Reader
	}
	var procs []proc
	for range n {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+w.mem)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		f := stdin.(*os.File)
		procs = append(procs, proc{cmd, f, bufio.NewReader(stdout)})
		t.Cleanup(func() { _ = f.Close(); _ = cmd.Wait() })
	}
	line := func(p proc) string {
		got := make(chan string, 1)
		go func() { s, _ := p.out.ReadString('\n'); got <- strings.TrimSpace(s) }()
		select {
		case s := <-got:
			return s
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Fatal("a racer did not answer")
			return ""
		}
	}
	for _, p := range procs {
		if s := line(p); s != "ready" {
			t.Fatalf("racer: %q", s)
		}
	}
	for _, p := range procs {
		fmt.Fprintln(p.in, "go")
	}
	won := 0
	for _, p := range procs {
		s := line(p)
		switch {
		case s == "won":
			won++
		case strings.HasPrefix(s, "lost: no consolidation ("):
			// The lock gate, or the time gate once the winner's lock
			// carries its start time: either way it does not dream.
		default:
			t.Errorf("racer said %q", s)
		}
	}
	if won != 1 {
		t.Fatalf("%d racers won the lock, want exactly one", won)
	}
	for _, p := range procs {
		fmt.Fprintln(p.in, "done")
		_ = p.in.Close()
	}
}
