package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/cli"
	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/transcript"
	"github.com/cohort-dev/cohort/worktree"
	"go.uber.org/goleak"
)

// Main runs a test package's tests from its TestMain, with GORACE set for
// the race-enabled programs they start (testbin.UseRaceOptions), fails the
// run when a goroutine outlives them, runs cleanups (a package's own, such
// as a server it started once for all its tests) and exits.
func Main(m *testing.M, cleanups ...func()) {
	testbin.UseRaceOptions()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			os.Stderr.WriteString("goroutine leak: " + err.Error() + "\n")
			code = 1
		}
	}
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

// Harness is one CLI environment: a temp HOME and COHORT_HOME, a project
// directory, and a fake Messages API. Vars is the whole environment, so
// no XDG_STATE_HOME of the developer's reaches it: configtrust's per-user
// registry lies in the temp HOME (~/.local/state/cohort/trust).
type Harness struct {
	T    *testing.T
	Home string            // $HOME
	Dir  string            // the project directory, the CLI's --cwd
	Srv  *fakeapi.Server   // the fake Messages API
	Tags string            // the build tags of the binary RunBinary runs
	Vars map[string]string // the whole environment the CLI sees
}

// New makes a Harness whose fake answers with policy.
func New(t *testing.T, policy fakeapi.Policy) *Harness {
	t.Helper()
	root := t.TempDir()
	h := &Harness{T: t, Home: filepath.Join(root, "home"), Dir: filepath.Join(root, "project")}
	for _, d := range []string{h.Home, h.Dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.Srv = fakeapi.New(fakeapi.Config{Policy: policy})
	t.Cleanup(h.Srv.Close)
	h.Vars = map[string]string{
		"HOME":               h.Home,
		"COHORT_HOME":        filepath.Join(h.Home, ".cohort"),
		"ANTHROPIC_API_KEY":  "test-key",
		"ANTHROPIC_BASE_URL": h.Srv.URL,
		"PATH":               os.Getenv("PATH"),
		"GORACE":             testbin.RaceOptions(), // for the cohort binaries a test starts
	}
	h.useTestProvider()
	return h
}

// Environ is the harness's environment, as os.Environ would return it.
func (h *Harness) Environ() []string {
	var out []string
	for k, v := range h.Vars {
		out = append(out, k+"="+v)
	}
	return out
}

// Run runs the CLI in-process with a deadline.
func (h *Harness) Run(args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(h.T.Context(), 60*time.Second)
	defer cancel()
	return h.RunCtx(ctx, args...)
}

// RunCtx is Run with the caller's context.
func (h *Harness) RunCtx(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Main(ctx, cli.Invocation{
		Args: append([]string{"--cwd", h.Dir}, args...), Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb,
		Getenv:  func(k string) string { return h.Vars[k] },
		Environ: h.Environ,
		Getwd:   func() (string, error) { return h.Dir, nil },
	})
	return out.String(), errb.String(), code
}

// Result decodes a --output-format json result.
func (h *Harness) Result(stdout string) ResultLine {
	h.T.Helper()
	var r ResultLine
	if err := json.Unmarshal([]byte(strings.TrimSpace(LastLine(stdout))), &r); err != nil {
		h.T.Fatalf("result is not JSON: %v\n%s", err, stdout)
	}
	return r
}

// Write writes a file under the project directory and returns its path.
func (h *Harness) Write(name, content string) string {
	h.T.Helper()
	p := filepath.Join(h.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.T.Fatal(err)
	}
	return p
}

// Read reads a file under the project directory.
func (h *Harness) Read(name string) string {
	h.T.Helper()
	data, err := os.ReadFile(filepath.Join(h.Dir, name))
	if err != nil {
		h.T.Fatal(err)
	}
	return string(data)
}

// RunStdin runs the CLI in-process with stdin.
func (h *Harness) RunStdin(stdin string, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(h.T.Context(), 60*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = cli.Main(ctx, cli.Invocation{
		Args: append([]string{"--cwd", h.Dir}, args...), Stdin: strings.NewReader(stdin),
		Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return h.Vars[k] }, Environ: h.Environ,
		Getwd: func() (string, error) { return h.Dir, nil },
	})
	return out.String(), errb.String(), code
}

// ProjectDir is where the harness's sessions are written.
func (h *Harness) ProjectDir() string {
	return transcript.ProjectDir(h.Vars["COHORT_HOME"], worktree.ProjectSlug(h.Dir))
}
