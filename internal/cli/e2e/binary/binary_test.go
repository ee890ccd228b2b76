package binary

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestSIGINTStopsBashAndExitsCleanly runs the real binary, sends SIGINT
// while a Bash call runs, and checks that the process group of that call is
// gone, the CLI still reported a result, and it exited 130 as Claude Code
// and shells do for Ctrl-C (128 + SIGINT), not 1 as for a failed run.
func TestSIGINTStopsBashAndExitsCleanly(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	pidFile := filepath.Join(h.Dir, "bash.pid")
	c.On("run something slow", clitest.Calls(clitest.Use("Bash", map[string]any{
		"command": "echo $$ > " + pidFile + "; sleep 300 & sleep 300; wait"})))
	var out, errb bytes.Buffer
	pgid, err := interruptSlowRun(t, bin, h, pidFile, &out, &errb)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v (want exit code 130)\nstderr: %s", err, errb.String())
	}
	if pids := clitest.GroupMembers(pgid); len(pids) > 0 {
		t.Fatalf("Bash's process group %d still has running members %v", pgid, pids)
	}
	r := h.Result(out.String())
	if !r.IsError || !strings.Contains(r.Result, "interrupted") {
		t.Fatalf("result after SIGINT = %+v", r)
	}
}

// interruptSlowRun runs bin on "run something slow" (the policy's Bash
// call writes its pid to pidFile), sends it SIGINT once the call runs, and
// returns the call's process group and how the CLI exited. It fails t when
// the CLI does not exit within 30 s.
func interruptSlowRun(t *testing.T, bin string, h *clitest.Harness, pidFile string, out, errb *bytes.Buffer) (int, error) {
	t.Helper()
	cmd := exec.Command(bin, "-p", "run something slow", "--output-format", "json", "--allowedTools", "Bash", "--cwd", h.Dir)
	cmd.Env = h.Environ()
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pgid := clitest.WaitForPID(t, pidFile)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		return pgid, err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatal("the CLI did not exit after SIGINT")
	}
	return 0, nil
}

// TestBinaryToolSequence drives write → read → edit → grep → glob → bash
// through the built binary, over HTTP to the fake API (ANTHROPIC_BASE_URL).
func TestBinaryToolSequence(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	a := filepath.Join(h.Dir, "a.txt")
	c.On("binary sequence",
		clitest.Calls(clitest.Use("Write", map[string]any{"file_path": a, "content": "one two\n"})),
		clitest.Calls(clitest.Use("Read", map[string]any{"file_path": a})),
		clitest.Calls(clitest.Use("Edit", map[string]any{"file_path": a, "old_string": "two", "new_string": "three"})),
		clitest.Calls(clitest.Use("Grep", map[string]any{"pattern": "three", "path": h.Dir, "output_mode": "content"})),
		clitest.Calls(clitest.Use("Glob", map[string]any{"pattern": "*.txt", "path": h.Dir})),
		clitest.Calls(clitest.Use("Bash", map[string]any{"command": "wc -w < a.txt > count.txt"})),
		clitest.Text("sequence done"),
	)
	out, errOut, code := h.RunBinary("-p", "binary sequence", "--output-format", "json",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "sequence done" || r.NumTurns != 7 {
		t.Fatalf("result = %+v", r)
	}
	if got := h.Read("a.txt"); got != "one three\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if got := strings.TrimSpace(h.Read("count.txt")); got != "2" {
		t.Fatalf("count.txt = %q", got)
	}
	if n := len(h.Srv.Requests()); n != 7 {
		t.Fatalf("the fake saw %d requests over HTTP, want 7", n)
	}
}
