package shell

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type outcome struct {
	Text    string
	IsError bool
}

func run(t *testing.T, b tool.Tool, ctx context.Context, env *tool.Env, in map[string]any) (tool.Result, error) {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.ValidateInput(b.Def().InputSchema, raw); err != nil {
		t.Fatalf("input %s does not match the schema: %v", raw, err)
	}
	return b.Run(ctx, env, raw)
}

func newBash() tool.Tool { return NewBash(Config{Grace: 100 * time.Millisecond}) }

func TestBash(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want outcome
	}{
		{"output", map[string]any{"command": "echo hello; echo world"}, outcome{"hello\nworld", false}},
		{"stderr interleaved", map[string]any{"command": "echo a; echo b >&2; echo c"}, outcome{"a\nb\nc", false}},
		{"no output", map[string]any{"command": "true", "description": "Do nothing"}, outcome{"(no output)", false}},
		{"exit code", map[string]any{"command": "echo partial; exit 7"}, outcome{"Exit code 7\npartial", true}},
		{"exit code without output", map[string]any{"command": "false"}, outcome{"Exit code 1", true}},
		{"signal", map[string]any{"command": "kill -SEGV $$"}, outcome{"Command was killed by signal segmentation fault.", true}},
		{"runs in cwd", map[string]any{"command": "basename \"$PWD\""}, outcome{"work", false}},
		{"marker env", map[string]any{"command": "echo $COHORT $GIT_EDITOR"}, outcome{"1 true", false}},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, outcome{"done", false}},
		{"no terminal", map[string]any{"command": "(: </dev/tty) 2>/dev/null || echo no tty"}, outcome{"no tty", false}},
		{"bash features", map[string]any{"command": "a=(x y); echo ${#a[@]} $((6*7))"}, outcome{"2 42", false}},
		{"cd does not persist", map[string]any{"command": "cd / && pwd"}, outcome{"/", false}},
		{"empty command", map[string]any{"command": "  "}, outcome{"command is empty; pass the command line to run", true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "work")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			res, err := run(t, newBash(), t.Context(), &tool.Env{Caller: tool.Caller{Cwd: dir}}, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, outcome{res.TextOf(), res.IsError}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBashMissingCwd(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "gone")
	res, err := run(t, newBash(), t.Context(), &tool.Env{Caller: tool.Caller{Cwd: missing}}, map[string]any{"command": "pwd"})
	if err != nil || !res.IsError || !strings.Contains(res.TextOf(), missing+" does not exist") {
		t.Errorf("got %q, %v", res.TextOf(), err)
	}
}

func TestBashOutputCap(t *testing.T) {
	t.Parallel()
	b := NewBash(Config{MaxOutput: 100})
	res, err := run(t, b, t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}},
		map[string]any{"command": "echo BEGIN; seq 1 10000; echo END"})
	if err != nil {
		t.Fatal(err)
	}
	got := res.TextOf()
	if !strings.HasPrefix(got, "BEGIN\n1\n2\n") || !strings.HasSuffix(got, "9999\n10000\nEND") {
		t.Errorf("head or tail lost:\n%s", got)
	}
	if !strings.Contains(got, "bytes of output omitted") || len(got) > 200 {
		t.Errorf("output not capped (%d bytes):\n%s", len(got), got)
	}
	meta := res.Meta.(Outcome)
	if meta.OutputBytes != 48904 || meta.DroppedBytes != 48904-100 {
		t.Errorf("meta = %+v", meta)
	}
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func readPids(t *testing.T, text string) []int {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(text) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no pids in %q", text)
	}
	return pids
}

func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if running(pid) {
			t.Errorf("process %d survived", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	res, err := run(t, newBash(), t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}}, map[string]any{
		"command": "sleep 300 & echo $!; (sleep 300; echo never) & echo $!; wait", "timeout": 1500,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasPrefix(res.TextOf(), "Command timed out after 1.5s and was stopped") {
		t.Errorf("result = %q", res.TextOf())
	}
	if m := res.Meta.(Outcome); !m.TimedOut {
		t.Errorf("meta = %+v", m)
	}
	assertGone(t, readPids(t, strings.SplitN(res.TextOf(), "\n", 2)[1]))
}

func TestBashCancelKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	type ret struct {
		res tool.Result
		err error
	}
	done := make(chan ret, 1)
	go func() {
		res, err := run(t, newBash(), ctx, &tool.Env{Caller: tool.Caller{Cwd: dir}}, map[string]any{
			"command": "sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; touch ready; wait",
		})
		done <- ret{res, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("command never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	r := <-done
	if !errors.Is(r.err, context.Canceled) || !r.res.IsError {
		t.Errorf("Run = %q, %v; want an interrupted result and context.Canceled", r.res.TextOf(), r.err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	assertGone(t, readPids(t, string(data)))
}

func TestBashBackground(t *testing.T) {
	t.Parallel()
	env := &tool.Env{Caller: tool.Caller{Cwd: t.TempDir(), ID: "a1"}}
	res, err := run(t, newBash(), t.Context(), env, map[string]any{"command": "sleep 1", "run_in_background": true})
	if err != nil || !res.IsError || !strings.HasPrefix(res.TextOf(), "Background shells are not available in this build.") {
		t.Errorf("without a hook: %q, %v", res.TextOf(), err)
	}

	var gotCmd, gotDesc, gotAgent string
	b := NewBash(Config{Background: func(_ context.Context, env *tool.Env, command, description string, _ RunFunc) (string, string, error) {
		gotCmd, gotDesc, gotAgent = command, description, env.Caller.ID
		return "b42", "/tmp/out/b42.log", nil
	}})
	res, err = run(t, b, t.Context(), env, map[string]any{"command": "npm run dev", "description": "Start dev server", "run_in_background": true})
	if err != nil || res.IsError {
		t.Fatalf("with a hook: %q, %v", res.TextOf(), err)
	}
	want := "Command started in the background as task b42. Its output is written to /tmp/out/b42.log; you will be notified when it finishes."
	if diff := cmp.Diff(want, res.TextOf()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if gotCmd != "npm run dev" || gotDesc != "Start dev server" || gotAgent != "a1" {
		t.Errorf("hook got %q %q %q", gotCmd, gotDesc, gotAgent)
	}
	if m, ok := res.Meta.(BackgroundStarted); !ok || m.TaskID != "b42" {
		t.Errorf("meta = %+v", res.Meta)
	}

	failing := NewBash(Config{Background: func(context.Context, *tool.Env, string, string, RunFunc) (string, string, error) {
		return "", "", errors.New("too many tasks")
	}})
	res, _ = run(t, failing, t.Context(), env, map[string]any{"command": "x", "run_in_background": true})
	if !res.IsError || res.TextOf() != "could not start the command in the background: too many tasks" {
		t.Errorf("failing hook: %q", res.TextOf())
	}
}

func TestBashSchema(t *testing.T) {
	b := newBash()
	if err := tool.ValidateInput(b.Def().InputSchema, json.RawMessage(`{"command":"x","timeout":600001}`)); err == nil ||
		!strings.Contains(err.Error(), `"timeout": must be ≤ 600000`) {
		t.Errorf("timeout bound not enforced: %v", err)
	}
	if tr := b.Traits(nil); tr.ReadOnly || tr.ConcurrencySafe {
		t.Errorf("traits = %+v", tr)
	}
	if b.Def().Name != "Bash" {
		t.Errorf("name = %q", b.Def().Name)
	}
}

func TestBashShellFallback(t *testing.T) {
	t.Parallel()
	b := NewBash(Config{Shell: "sh"})
	res, err := run(t, b, t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}}, map[string]any{"command": "echo via sh"})
	if err != nil || res.TextOf() != "via sh" {
		t.Errorf("got %q, %v", res.TextOf(), err)
	}
	b = NewBash(Config{Shell: "/nonexistent/shell"})
	if _, err := run(t, b, t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}}, map[string]any{"command": "true"}); err == nil {
		t.Errorf("a missing shell is not an error")
	}
}

// TestLookBashFollowsPATH checks that the remembered bash is dropped when
// PATH changes, and that a missing bash is not remembered.
func TestLookBashFollowsPATH(t *testing.T) {
	want, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed for this test: %v", err)
	}
	if got := lookBash(); got != want {
		t.Fatalf("lookBash() = %q, want %q", got, want)
	}
	dir := t.TempDir()
	other := filepath.Join(dir, "bash")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got := lookBash(); got != other {
		t.Fatalf("after PATH changed, lookBash() = %q, want %q", got, other)
	}
	t.Setenv("PATH", t.TempDir())
	if got := lookBash(); got != "" {
		t.Fatalf("with no bash on PATH, lookBash() = %q, want \"\"", got)
	}
}

// Bash must not hand Cohort's credentials to the model: printenv, env and
// jq -n env are read-only commands, so the variables must not be there.
// A settings "env" entry (Config.Env) is the way to give one on purpose.
func TestBashEnvHasNoCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-secret")
	t.Setenv("OPENAI_API_KEY", "sk-openai-secret")
	t.Setenv("NATS_CREDS", "/home/u/nats.creds")
	b := NewBash(Config{Grace: 100 * time.Millisecond, Env: []string{"NATS_TOKEN=given-on-purpose"}})
	res, err := run(t, b, t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}}, map[string]any{"command": "env; printenv ANTHROPIC_API_KEY; echo end"})
	if err != nil {
		t.Fatal(err)
	}
	out := res.TextOf()
	for _, secret := range []string{"sk-ant-secret", "tok-secret", "sk-openai-secret", "nats.creds"} {
		if strings.Contains(out, secret) {
			t.Errorf("Bash's environment holds %q", secret)
		}
	}
	if !strings.Contains(out, "NATS_TOKEN=given-on-purpose") || !strings.Contains(out, "end") {
		t.Errorf("settings env missing or command failed:\n%s", out)
	}
}
