// Package trial runs one end-to-end benchmark workload: the real cohort
// binary as a child process against bench/cmd/fakeserve in another child
// process, timed from the outside.
//
// What is measured, and why this way:
//
//   - Wall time is from just before the cohort process is started to the
//     return of wait4 on it: process start, runtime start-up, every model
//     request, every tool call and the exit are all in it. The fake is
//     started (and its URL read) before the clock starts.
//   - Peak memory is the kernel's ru_maxrss for the cohort process as wait4
//     reports it: the high-water mark of its resident set, in the child, not
//     an estimate from Go's heap statistics. Linux reports the larger of the
//     process's own peak and that of its largest reaped child; the Bash
//     children are a few MB, so it is cohort's.
//   - CPU is ru_utime + ru_stime of the cohort process, which on Linux
//     includes the children it reaped (the bash processes of Bash calls).
//     The fake's CPU is reported separately: it runs on the same cores, so on
//     a 2-core machine it competes with cohort for wall time even though it
//     is not counted in cohort's CPU or memory.
//   - The fake writes nothing to disk and logs nothing; cohort writes its
//     transcripts and task output files under a fresh temp COHORT_HOME, as it
//     would for a user.
//
// Both children run in their own process groups (a terminal's Ctrl-C goes to
// the benchmark, which then stops them); on any error, deadline or
// cancellation they are sent SIGTERM and then SIGKILL and are always reaped,
// and the temp directory is removed.
package trial

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/bench/scenario"
)

// Config describes one trial.
type Config struct {
	// Cohort and FakeServe are the binaries (see Build).
	Cohort    string
	FakeServe string
	// Spec is the workload. For scenario.ToolsMixed its File is filled in
	// with a file Run creates in the project directory.
	Spec scenario.Spec
	// MaxConcurrent is passed as --max-concurrent-agents when non-zero.
	MaxConcurrent int
	// Args are extra cohort arguments.
	Args []string
	// FakeArgs are extra fakeserve arguments (e.g. -nocache).
	FakeArgs []string
	// Timeout bounds the cohort run (default 2 minutes).
	Timeout time.Duration
	// Trash, when set, keeps the run's workspace for deletion after the
	// last run instead of deleting it at once (see Trash).
	Trash *Trash
}

// Result is one trial's measurements.
type Result struct {
	Wall    time.Duration
	MaxRSS  int64 // bytes, ru_maxrss of the cohort process
	CPU     time.Duration
	FakeCPU time.Duration
	// Summary is what the fake saw; Check is nil when it shows the whole
	// workload done exactly once.
	Summary scenario.Summary
	Check   error
	// NumTurns is the lead's turn count from cohort's JSON result.
	NumTurns int
}

// DefaultLimit is cohort's default --max-concurrent-agents (the runtime's).
const DefaultLimit = 32

// Limit returns the agent limit a run with --max-concurrent-agents n has.
func Limit(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return n
}

// grace is how long each stop step waits before the next one.
const grace = 3 * time.Second

// Workspace is the directories of one run: a temp HOME (with COHORT_HOME
// inside) and a project directory, and the workload with its paths filled
// in.
type Workspace struct {
	Dir     string // the temp root; Remove deletes it
	Home    string
	Project string
	Spec    scenario.Spec
}

// NewWorkspace creates the directories for spec (and, for
// scenario.ToolsMixed, the file its agents read).
func NewWorkspace(spec scenario.Spec) (*Workspace, error) {
	tmp, err := os.MkdirTemp("", "cohort-trial-")
	if err != nil {
		return nil, err
	}
	w := &Workspace{Dir: tmp, Home: filepath.Join(tmp, "home"), Project: filepath.Join(tmp, "project"), Spec: spec}
	for _, d := range []string{w.Home, w.Project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			w.Remove()
			return nil, err
		}
	}
	if spec.Tools == scenario.ToolsMixed {
		w.Spec.File = filepath.Join(w.Project, "data.txt")
		if err := os.WriteFile(w.Spec.File, []byte(sampleFile), 0o644); err != nil {
			w.Remove()
			return nil, err
		}
	}
	if err := w.Spec.Validate(); err != nil {
		w.Remove()
		return nil, err
	}
	return w, nil
}

// Remove deletes the workspace.
func (w *Workspace) Remove() { os.RemoveAll(w.Dir) }

// Trash holds finished workspaces until Empty. A scale run leaves a few
// thousand files (transcripts, task outputs); deleting them just before the
// next run makes that run's own file creation several times slower — ext4
// passes over inodes freed in the last half-minute when it allocates one
// (an isolated create measured 165 µs right after such a deletion, 17 µs
// 35 s later) — a cost no real session pays, and 0.3 – 0.6 s of cohort's
// CPU per run. So consecutive runs keep their workspaces and the last one
// deletes them all. Safe for concurrent use.
type Trash struct {
	mu   sync.Mutex
	dirs []*Workspace
}

// Put keeps w for Empty.
func (t *Trash) Put(w *Workspace) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirs = append(t.dirs, w)
}

// Empty deletes every workspace put since the last Empty.
func (t *Trash) Empty() {
	t.mu.Lock()
	dirs := t.dirs
	t.dirs = nil
	t.mu.Unlock()
	for _, w := range dirs {
		w.Remove()
	}
}

// discard removes w now, or hands it to trash when there is one.
func discard(w *Workspace, trash *Trash) {
	if trash != nil {
		trash.Put(w)
		return
	}
	w.Remove()
}

// Args returns cohort's arguments for the workload: print mode, JSON
// result, Bash pre-approved.
func (w *Workspace) Args(maxConcurrent int, extra ...string) []string {
	args := []string{"-p", w.Spec.Prompt(), "--output-format", "json", "--allowedTools", "Bash", "--cwd", w.Project}
	if maxConcurrent > 0 {
		args = append(args, "--max-concurrent-agents", strconv.Itoa(maxConcurrent))
	}
	return append(args, extra...)
}

// Env returns cohort's whole environment: nothing of the caller's but PATH.
func (w *Workspace) Env(baseURL string) []string {
	return []string{
		"HOME=" + w.Home, "COHORT_HOME=" + filepath.Join(w.Home, ".cohort"),
		"ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + baseURL,
		"PATH=" + os.Getenv("PATH"), "TMPDIR=" + w.Dir,
	}
}

// Run runs one trial. An error means the trial could not be measured
// (cohort failed, a process hung); a run that completed but did the wrong
// work is reported in Result.Check.
func Run(ctx context.Context, cfg Config) (res Result, err error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Minute
	}
	w, err := NewWorkspace(cfg.Spec)
	if err != nil {
		return res, err
	}
	defer discard(w, cfg.Trash)
	fake, err := StartFake(ctx, cfg.FakeServe, cfg.FakeArgs...)
	if err != nil {
		return res, err
	}
	defer func() {
		sum, cpu, ferr := fake.Finish()
		res.Summary, res.FakeCPU = sum, cpu
		if err == nil && ferr != nil {
			err = ferr
		}
		if err == nil {
			res.Check = w.Spec.Check(sum, Limit(cfg.MaxConcurrent))
		}
	}()
	out, err := runCohort(ctx, cfg.Cohort, w.Args(cfg.MaxConcurrent, cfg.Args...), w.Env(fake.URL), w.Dir, cfg.Timeout)
	if err != nil {
		return res, err
	}
	res.Wall, res.MaxRSS, res.CPU = out.wall, out.maxRSS, out.cpu
	res.NumTurns, err = CheckResult(out.stdout, out.stderr, out.code)
	return res, err
}

// CheckResult decodes cohort's --output-format json result and returns its
// num_turns, or an error when the run failed.
func CheckResult(stdout, stderr []byte, code int) (int, error) {
	var r struct {
		IsError  bool   `json:"is_error"`
		Result   string `json:"result"`
		NumTurns int    `json:"num_turns"`
	}
	if err := json.Unmarshal(lastLine(stdout), &r); err != nil {
		return 0, fmt.Errorf("cohort exit %d; its output is not a JSON result (%v)\nstdout: %.2000s\nstderr: %.2000s", code, err, stdout, stderr)
	}
	if code != 0 || r.IsError {
		return r.NumTurns, fmt.Errorf("cohort exit %d: %.500s\nstderr: %.2000s", code, r.Result, stderr)
	}
	return r.NumTurns, nil
}

func lastLine(b []byte) []byte {
	b = []byte(strings.TrimSpace(string(b)))
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

// sampleFile is what Read returns to the agents: a few KB of source.
var sampleFile = strings.Repeat("// Package sample is read by benchmark agents.\npackage sample\n\nfunc Sum(xs []int) (n int) {\n\tfor _, x := range xs {\n\t\tn += x\n\t}\n\treturn n\n}\n\n", 20)

// cohortRun is what runCohort observed.
type cohortRun struct {
	wall           time.Duration
	maxRSS         int64
	cpu            time.Duration
	code           int
	stdout, stderr []byte
}

// runCohort runs the binary to completion with output going to files (no
// copying goroutines inside the timed span) and returns its rusage.
func runCohort(ctx context.Context, bin string, args, env []string, dir string, timeout time.Duration) (cohortRun, error) {
	var r cohortRun
	stdout, err := os.CreateTemp(dir, "stdout-")
	if err != nil {
		return r, err
	}
	defer stdout.Close()
	stderr, err := os.CreateTemp(dir, "stderr-")
	if err != nil {
		return r, err
	}
	defer stderr.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, dir, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("start cohort: %w", err)
	}
	waitErr := awaitExit(ctx, cmd, timeout)
	r.wall = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r.code = cmd.ProcessState.ExitCode()
	r.stdout, _ = os.ReadFile(stdout.Name())
	r.stderr, _ = os.ReadFile(stderr.Name())
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return r, fmt.Errorf("cohort: %w\nstderr: %.2000s", waitErr, r.stderr)
	}
	return r, nil
}

// errTimeout reports a process stopped at its deadline.
var errTimeout = errors.New("timed out")

// awaitExit waits for cmd (started in its own process group). If ctx ends
// or timeout passes first, it gets SIGTERM, then SIGKILL, and it is reaped
// either way. Signals go through os.Process (a pidfd), never to a bare
// process or group id that might have been reused; cohort stops the
// process groups of its own tools when it is terminated.
func awaitExit(ctx context.Context, cmd *exec.Cmd, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var why error
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		why = ctx.Err()
	case <-timer.C:
		why = fmt.Errorf("%s after %s", errTimeout, timeout)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
	return fmt.Errorf("%s stopped: %w", filepath.Base(cmd.Path), why)
}

// Fake is a running fakeserve process.
type Fake struct {
	// URL is the fake's base URL.
	URL string

	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	ctx   context.Context
}

// StartFake starts fakeserve with args and reads its URL. The caller must
// call Finish.
func StartFake(ctx context.Context, bin string, args ...string) (*Fake, error) {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start fakeserve: %w", err)
	}
	f := &Fake{cmd: cmd, stdin: stdin, lines: make(chan string, 2), ctx: ctx}
	go func() { // ends at fakeserve's EOF, which finish waits for
		defer close(f.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			f.lines <- sc.Text()
		}
	}()
	select {
	case line, ok := <-f.lines:
		if ok && strings.HasPrefix(line, "http://") {
			f.URL = line
			return f, nil
		}
		f.Finish()
		return nil, fmt.Errorf("fakeserve printed %q instead of its URL", line)
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	f.Finish()
	return nil, errors.New("fakeserve did not print its URL")
}

// Finish closes fakeserve's stdin (its signal to stop), reads its summary
// and reaps it. It returns the summary and the fake's CPU time.
func (f *Fake) Finish() (scenario.Summary, time.Duration, error) {
	var sum scenario.Summary
	f.stdin.Close()
	var summary string
	var readErr error
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case line, ok := <-f.lines:
		if ok {
			summary = line
		}
	case <-timer.C:
		readErr = errors.New("fakeserve did not print its summary")
	}
	waitErr := awaitExit(context.WithoutCancel(f.ctx), f.cmd, grace)
	for range f.lines { // the reader ends with the pipe
	}
	var cpu time.Duration
	if ru, ok := f.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	switch {
	case readErr != nil:
		return sum, cpu, readErr
	case waitErr != nil:
		return sum, cpu, fmt.Errorf("fakeserve: %w", waitErr)
	}
	if summary == "" {
		return sum, cpu, errors.New("fakeserve exited without a summary")
	}
	if err := json.Unmarshal([]byte(summary), &sum); err != nil {
		return sum, cpu, fmt.Errorf("fakeserve summary %.200q: %w", summary, err)
	}
	return sum, cpu, nil
}
