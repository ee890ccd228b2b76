package clitest

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/cohort-dev/cohort/internal/testbin"
)

// BuildBinary builds cmd/cohort (internal/testbin) and returns its path.
func BuildBinary(t *testing.T) string { return testbin.Cohort(t, RaceEnabled) }

// RunBinary runs the built cohort binary in the harness's environment,
// built with h.Tags.
func (h *Harness) RunBinary(args ...string) (stdout, stderr string, code int) {
	h.T.Helper()
	bin := testbin.CohortTags(h.T, RaceEnabled, h.Tags)
	cmd := exec.CommandContext(h.T.Context(), bin, append([]string{"--cwd", h.Dir}, args...)...)
	cmd.Env = h.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.T.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// Running is a cohort binary a test started; the test's cleanup kills it
// and reaps it.
type Running struct {
	Cmd    *exec.Cmd
	Stdout *bytes.Buffer // read it only once Exited is closed
	Stderr *bytes.Buffer // read it only once Exited is closed
	Exited chan struct{} // closed once it has been reaped
}

// StartBinary starts bin with args in h's environment.
func StartBinary(t *testing.T, h *Harness, bin string, args ...string) *Running {
	t.Helper()
	r := &Running{Cmd: exec.Command(bin, args...), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Exited: make(chan struct{})}
	r.Cmd.Env = h.Environ()
	r.Cmd.Stdout, r.Cmd.Stderr = r.Stdout, r.Stderr
	if err := r.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.Cmd.Wait(); close(r.Exited) }()
	t.Cleanup(func() { _ = r.Cmd.Process.Kill(); <-r.Exited })
	return r
}
