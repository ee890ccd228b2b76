//go:build linux

package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fast keeps the stop steps short so tests that exercise them stay quick.
const fast = 100 * time.Millisecond

// sh runs script. Its Drain is long: these scripts leave no process holding
// the pipes, so Wait returns at EOF, and a loaded machine may take longer
// than fast to schedule the readers of the last output.
func sh(script string) Command {
	return Command{Path: "sh", Args: []string{"-c", script}, Grace: fast, Drain: 30 * time.Second}
}

// watcher is an output sink that signals once a marker has been written.
type watcher struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func newWatcher(marker string) *watcher {
	return &watcher{marker: marker, seen: make(chan struct{})}
}

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func (w *watcher) wait(t *testing.T) {
	t.Helper()
	select {
	case <-w.seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("never saw %q; output so far: %q", w.marker, w.String())
	}
}

// pids parses the numbers printed one per line before the marker.
func pids(t *testing.T, out string) []int {
	t.Helper()
	var list []int
	for _, line := range strings.Fields(out) {
		if n, err := strconv.Atoi(line); err == nil {
			list = append(list, n)
		}
	}
	if len(list) == 0 {
		t.Fatalf("no pids in output %q", out)
	}
	return list
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	state, _, ok := readStat(strconv.Itoa(pid))
	return ok && state != 'Z' && state != 'X'
}

func assertGone(t *testing.T, pgid int, children []int) {
	t.Helper()
	if groupAlive(pgid) {
		t.Errorf("process group %d still has running members", pgid)
	}
	for _, pid := range children {
		if running(pid) {
			t.Errorf("child %d still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestOutputAndExit(t *testing.T) {
	tests := []struct {
		name   string
		cmd    Command
		want   string
		code   int
		signal syscall.Signal
	}{
		{"stdout", sh("echo hello"), "hello\n", 0, 0},
		{"stderr interleaved", sh("echo a; echo b >&2; echo c"), "a\nb\nc\n", 0, 0},
		{"exit code", sh("echo oops >&2; exit 3"), "oops\n", 3, 0},
		{"killed by signal", sh("kill -9 $$"), "", -1, syscall.SIGKILL},
		{"stdin is dev null", Command{Path: "cat"}, "", 0, 0},
		{"stdin reader", Command{Path: "cat", Stdin: strings.NewReader("fed\n")}, "fed\n", 0, 0},
		{"new session has no terminal", Command{Path: "sh", Args: []string{"-c", `[ "$(ps -o sid= -p $$ | tr -d ' ')" = "$$" ] && ! (: </dev/tty) 2>/dev/null && echo detached`},
			NewSession: true}, "detached\n", 0, 0},
		{"dir and env", Command{Path: "sh", Args: []string{"-c", `echo "$X $(basename "$PWD")"`},
			Dir: "/", Env: []string{"X=set"}}, "set /\n", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Output(t.Context(), tt.cmd, 1000)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{res.Output, res.Code, res.Signal, res.Stopped}
			want := []any{tt.want, tt.code, tt.signal, nil}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if res.Success() != (tt.code == 0 && tt.signal == 0) {
				t.Errorf("Success() = %v for %v", res.Success(), res.Exit)
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	if _, err := Run(t.Context(), Command{Path: "/nonexistent/program"}); err == nil {
		t.Errorf("missing program: no error")
	}
	if _, err := Run(t.Context(), Command{Path: "cohort-no-such-program-xyz"}); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("program not in PATH: err = %v, want exec.ErrNotFound", err)
	}
	if _, err := Run(t.Context(), Command{Path: "true", Dir: t.TempDir() + "/missing"}); err == nil {
		t.Errorf("missing dir: no error")
	}
	if _, err := Run(t.Context(), Command{}); err == nil {
		t.Errorf("empty path: no error")
	}
	if _, err := Run(t.Context(), Command{Path: "cat", Stdin: strings.NewReader(""), StdinPipe: true}); err == nil {
		t.Errorf("Stdin and StdinPipe: no error")
	}
}

func TestOutputCap(t *testing.T) {
	t.Parallel()
	res, err := Output(t.Context(), sh("echo first; head -c 100000 /dev/zero | tr '\\0' x; echo; echo last"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 100012 || res.Dropped != 100012-1000 {
		t.Errorf("Total, Dropped = %d, %d; want 100012, %d", res.Total, res.Dropped, 100012-1000)
	}
	if !strings.HasPrefix(res.Output, "first\nxxx") || !strings.HasSuffix(res.Output, "xxx\nlast\n") {
		t.Errorf("head or tail lost: %q…%q", res.Output[:20], res.Output[len(res.Output)-20:])
	}
	if !strings.Contains(res.Output, "[… 99012 bytes of output omitted …]") {
		t.Errorf("no omission note in %q", res.Output)
	}
}

// TestTimeoutKillsGroup proves the whole group, including background
// children of the shell, is gone when Run returns after a timeout.
func TestTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	w := newWatcher("ready")
	c := Command{Path: "bash", Args: []string{"-c", "sleep 300 & echo $!; sleep 300 & echo $!; echo ready; wait"},
		Stdout: w, Timeout: 2 * time.Second, Grace: fast, Drain: fast}
	p, err := Start(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	exit, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(exit.Stopped, ErrTimeout) {
		t.Errorf("Stopped = %v, want ErrTimeout (output %q)", exit.Stopped, w.String())
	}
	assertGone(t, p.Pid(), pids(t, w.String()))
}

func TestCancelKillsGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	w := newWatcher("ready")
	p, err := Start(ctx, Command{Path: "bash", Args: []string{"-c", "sleep 300 & echo $!; echo ready; sleep 300"},
		Stdout: w, Grace: fast, Drain: fast})
	if err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	cancel()
	exit, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(exit.Stopped, context.Canceled) || exit.Signal != syscall.SIGTERM {
		t.Errorf("exit = %v, want stopped by cancel with SIGTERM", exit)
	}
	assertGone(t, p.Pid(), pids(t, w.String()))
}

func TestStopEscalatesToKill(t *testing.T) {
	t.Parallel()
	w := newWatcher("ready")
	// An ignored signal stays ignored across exec, so sleep ignores TERM too.
	p, err := Start(t.Context(), Command{Path: "sh", Args: []string{"-c", "trap '' TERM; sleep 300 & echo $!; echo ready; wait"},
		Stdout: w, Grace: fast, Drain: fast})
	if err != nil {
		t.Fatal(err)
	}
	w.wait(t)
	p.Stop()
	p.Stop() // idempotent
	exit, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(exit.Stopped, ErrStopped) || exit.Signal != syscall.SIGKILL {
		t.Errorf("exit = %v, want stopped with SIGKILL", exit)
	}
	assertGone(t, p.Pid(), pids(t, w.String()))
	if again, _ := p.Wait(); again != exit {
		t.Errorf("second Wait = %v, want %v", again, exit)
	}
}

// TestStopClosesStdinFirst: a child that ends on EOF is never signalled.
func TestStopClosesStdinFirst(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p, err := Start(t.Context(), Command{Path: "cat", StdinPipe: true, Stdout: &out, Grace: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stdin().Write([]byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	exit, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if exit.Code != 0 || exit.Signal != 0 || !errors.Is(exit.Stopped, ErrStopped) || out.String() != "hi\n" {
		t.Errorf("exit = %v, output %q; want a clean exit on EOF with output", exit, out.String())
	}
	if _, err := p.Stdin().Write([]byte("late")); err == nil {
		t.Errorf("write after stop succeeded")
	}
}

// TestStragglersKilledAfterExit: a background child holding the output pipe
// neither outlives its shell nor hangs Wait.
func TestStragglersKilledAfterExit(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p, err := Start(t.Context(), Command{Path: "bash", Args: []string{"-c", "sleep 300 & echo $!"}, Stdout: &out, Grace: fast, Drain: fast})
	if err != nil {
		t.Fatal(err)
	}
	exit, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !exit.Success() {
		t.Errorf("exit = %v, want success", exit)
	}
	assertGone(t, p.Pid(), pids(t, out.String()))
}

func TestKeepGroup(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p, err := Start(t.Context(), Command{Path: "bash", Args: []string{"-c", "sleep 300 >/dev/null 2>&1 & echo $!"},
		Stdout: &out, KeepGroup: true, Grace: fast, Drain: fast})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	child := pids(t, out.String())[0]
	if !running(child) {
		t.Errorf("KeepGroup: child %d was killed", child)
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
}

// TestEscapedHolderDoesNotHang: a process that left the group but holds the
// pipe delays Wait only by the drain period.
func TestEscapedHolderDoesNotHang(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	var out bytes.Buffer
	p, err := Start(t.Context(), Command{Path: "bash", Args: []string{"-c", "setsid sleep 300 & echo $!"}, Stdout: &out, Grace: fast, Drain: fast})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids(t, out.String()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("sink broken") }

func TestFailingWriterStillDrains(t *testing.T) {
	t.Parallel()
	exit, err := Run(t.Context(), Command{Path: "head", Args: []string{"-c", "1000000", "/dev/zero"}, Stdout: failWriter{}})
	if err != nil || !exit.Success() {
		t.Errorf("Run = %v, %v; want success", exit, err)
	}
}

func TestStdinFileAndExitString(t *testing.T) {
	t.Parallel()
	f, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exit, err := Run(t.Context(), Command{Path: "cat", Stdin: f})
	if err != nil || exit.String() != "exit code 0" {
		t.Errorf("Run = %q, %v", exit.String(), err)
	}
	e := Exit{Code: -1, Signal: syscall.SIGKILL, Stopped: ErrTimeout}
	if got := e.String(); got != "killed by signal killed (stopped: process timed out)" {
		t.Errorf("String() = %q", got)
	}
}

// BenchmarkRunTrue is the fixed cost of running a command that leaves
// nothing behind: start, wait, the check that its group is empty, reaping.
// cpu-ns/op is this process's CPU per run (the child's is not included).
func BenchmarkRunTrue(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	n := 0
	for b.Loop() {
		exit, err := Run(b.Context(), Command{Path: path})
		if err != nil || !exit.Success() {
			b.Fatalf("exit %v, err %v", exit, err)
		}
		n++
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := func(r syscall.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }
	b.ReportMetric(float64(cpu(after)-cpu(before))/float64(n), "cpu-ns/op")
}
