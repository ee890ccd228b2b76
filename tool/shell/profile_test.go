package shell

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/tool"
)

// The confinement follows the decision: a call whose Env says nothing, or
// says it was allowed as read-only, runs in the sandbox's read-only
// profile and writes nothing, in the foreground and in the background; a
// call approved to write (tool.ConfineWrite) writes. A call without any
// Env has no working directory and runs nothing.
func TestBashProfileFollowsTheDecision(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(root, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{Home: root, TempRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	var bgOut bytes.Buffer
	b := NewBash(Config{Sandbox: sb, Grace: 100 * time.Millisecond,
		Background: func(ctx context.Context, _ *tool.Env, _, _ string, run RunFunc) (string, string, error) {
			_, err := run(ctx, &bgOut) // synchronous here: the test waits for it
			return "b1", "out", err
		}})
	cases := []struct {
		name  string
		env   *tool.Env
		bg    bool
		write bool
	}{
		{"no env", nil, false, false},
		{"nothing said", &tool.Env{Caller: tool.Caller{Cwd: dir}}, false, false},
		{"read-only", &tool.Env{Caller: tool.Caller{Cwd: dir}, Confinement: tool.ConfineReadOnly}, false, false},
		{"read-only, background", &tool.Env{Caller: tool.Caller{Cwd: dir}}, true, false},
		{"approved to write", &tool.Env{Caller: tool.Caller{Cwd: dir}, Confinement: tool.ConfineWrite}, false, true},
		{"approved to write, background", &tool.Env{Caller: tool.Caller{Cwd: dir}, Confinement: tool.ConfineWrite}, true, true},
	}
	for i, c := range cases {
		name := "f" + string(rune('a'+i))
		res, err := run(t, b, t.Context(), c.env, map[string]any{"command": "echo x > " + filepath.Join(dir, name) + " && echo wrote", "run_in_background": c.bg})
		if c.env == nil {
			if err == nil && !res.IsError {
				t.Errorf("%s: a call with no Env ran: %q", c.name, res.TextOf())
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, statErr := os.Stat(filepath.Join(dir, name))
		if wrote := statErr == nil; wrote != c.write {
			t.Errorf("%s: wrote %v, want %v (result %q, background output %q)", c.name, wrote, c.write, res.TextOf(), bgOut.String())
		}
		if !c.write && !c.bg && !strings.Contains(res.TextOf(), "ran read-only") {
			t.Errorf("%s: the result does not say the command ran read-only: %q", c.name, res.TextOf())
		}
	}
}

// TestSandboxNoteOnAChainThatEndsWell: a write the sandbox blocked is
// explained even when the command's last step succeeds and its exit code
// is 0. (Through the relay, `cp -r … /tmp/x && … ; rm -rf /tmp/x` came
// back as a bare "Permission denied", exit 0, and the model never learnt
// the sandbox was the cause.)
func TestSandboxNoteOnAChainThatEndsWell(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(root, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{Home: root, TempRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	b := NewBash(Config{Sandbox: sb, Grace: 100 * time.Millisecond})
	outside := filepath.Join(filepath.Dir(root), filepath.Base(root)+"-outside")
	env := &tool.Env{Caller: tool.Caller{Cwd: dir}, Confinement: tool.ConfineWrite}
	res, err := run(t, b, t.Context(), env, map[string]any{"command": "mkdir " + outside + "; echo cleaned up"})
	if err != nil {
		t.Fatal(err)
	}
	if _, statErr := os.Stat(outside); statErr == nil {
		os.Remove(outside)
		t.Fatalf("the sandbox let the command write %s", outside)
	}
	if got := res.TextOf(); res.IsError || !strings.Contains(got, "blocked by the sandbox: "+outside+" is outside the writable dirs") {
		t.Errorf("exit 0 with a blocked write: result %q (error %v) does not explain it", got, res.IsError)
	}
}
