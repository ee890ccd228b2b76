package cli

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/testbin"
)

// buildBinary builds cmd/cohort once per test run.
func buildBinary(t *testing.T) string { return testbin.CohortTags(t, raceEnabled, buildTags) }

// TestSIGINTStopsBashAndExitsCleanly runs the real binary, sends SIGINT
// while a Bash call runs, and checks that the process group of that call is
// gone, the CLI still reported a result, and it exited 130 as Claude Code
// and shells do for Ctrl-C (128 + SIGINT), not 1 as for a failed run.
func TestSIGINTStopsBashAndExitsCleanly(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	c := newConv()
	h := newHarness(t, c.policy)
	pidFile := filepath.Join(h.dir, "bash.pid")
	c.on("run something slow", calls(use("Bash", map[string]any{
		"command": "echo $$ > " + pidFile + "; sleep 300 & sleep 300; wait"})))
	cmd := exec.Command(bin, "-p", "run something slow", "--output-format", "json", "--allowedTools", "Bash", "--cwd", h.dir)
	cmd.Env = h.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pgid := waitForPID(t, pidFile)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Fatalf("exit: %v (want exit code 130)\nstderr: %s", err, errb.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatal("the CLI did not exit after SIGINT")
	}
	if pids := groupMembers(pgid); len(pids) > 0 {
		t.Fatalf("Bash's process group %d still has running members %v", pgid, pids)
	}
	r := h.result(out.String())
	if !r.IsError || !strings.Contains(r.Result, "interrupted") {
		t.Fatalf("result after SIGINT = %+v", r)
	}
}

// runBinary runs the built cohort binary in the harness's environment.
func (h *harness) runBinary(args ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	bin := buildBinary(h.t)
	cmd := exec.CommandContext(h.t.Context(), bin, append([]string{"--cwd", h.dir}, args...)...)
	cmd.Env = h.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestBinaryToolSequence drives write → read → edit → grep → glob → bash
// through the built binary, over HTTP to the fake API (ANTHROPIC_BASE_URL).
func TestBinaryToolSequence(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	a := filepath.Join(h.dir, "a.txt")
	c.on("binary sequence",
		calls(use("Write", map[string]any{"file_path": a, "content": "one two\n"})),
		calls(use("Read", map[string]any{"file_path": a})),
		calls(use("Edit", map[string]any{"file_path": a, "old_string": "two", "new_string": "three"})),
		calls(use("Grep", map[string]any{"pattern": "three", "path": h.dir, "output_mode": "content"})),
		calls(use("Glob", map[string]any{"pattern": "*.txt", "path": h.dir})),
		calls(use("Bash", map[string]any{"command": "wc -w < a.txt > count.txt"})),
		text("sequence done"),
	)
	out, errOut, code := h.runBinary("-p", "binary sequence", "--output-format", "json",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.result(out); r.Result != "sequence done" || r.NumTurns != 7 {
		t.Fatalf("result = %+v", r)
	}
	if got := h.read("a.txt"); got != "one three\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if got := strings.TrimSpace(h.read("count.txt")); got != "2" {
		t.Fatalf("count.txt = %q", got)
	}
	if n := len(h.srv.Requests()); n != 7 {
		t.Fatalf("the fake saw %d requests over HTTP, want 7", n)
	}
}

// running is a cohort binary a test started; the test's cleanup kills it
// and reaps it.
type running struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	exited chan struct{} // closed once it has been reaped
}

// startBinary starts bin with args in h's environment.
func startBinary(t *testing.T, h *harness, bin string, args ...string) *running {
	t.Helper()
	r := &running{cmd: exec.Command(bin, args...), stderr: &bytes.Buffer{}, exited: make(chan struct{})}
	r.cmd.Env = h.environ()
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); <-r.exited })
	return r
}
