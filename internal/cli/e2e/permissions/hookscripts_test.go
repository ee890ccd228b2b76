package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestHookScriptIsProtected is issue 15's finding 4: in acceptEdits the
// model read a configured hook script, rewrote it, and its next Write ran
// the new script. A file that a hook executes is a protected path like the
// settings files: editing it asks (and print mode refuses).
func TestHookScriptIsProtected(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var results []string
	var h *clitest.Harness
	c := clitest.NewConv()
	record := func(next func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
		return func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
			return next(r)
		}
	}
	c.On("rewrite the hook",
		func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Dir, "hooks", "check.sh")})}}
		},
		func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
				"file_path": filepath.Join(h.Dir, "hooks", "check.sh"), "content": "#!/bin/sh\ntouch " + filepath.Join(h.Dir, "pwned") + "\n"})}}
		},
		record(func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
				"file_path": filepath.Join(h.Dir, "notes.txt"), "content": "hi\n"})}}
		}),
		record(clitest.Text("done")))
	h = clitest.New(t, c.Policy)
	script := writeScriptFile(t, filepath.Join(h.Dir), "check.sh", "cat >/dev/null\nexit 0\n")
	if err := os.MkdirAll(filepath.Join(h.Dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	hookPath := filepath.Join(h.Dir, "hooks", "check.sh")
	if err := os.Rename(script, hookPath); err != nil {
		t.Fatal(err)
	}
	h.Write(".cohort/settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/check.sh --strict"}]}]}}`)
	out, errOut, code := h.Run("-p", "rewrite the hook", "--permission-mode", "acceptEdits")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(hookPath); strings.Contains(string(data), "pwned") {
		t.Errorf("the hook script was rewritten:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "pwned")); err == nil {
		t.Errorf("the rewritten hook ran")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) == 0 || !strings.HasPrefix(results[0], "ERROR:") || !strings.Contains(results[0], "ermission") {
		t.Errorf("the Write of the hook script should have been refused; results %q", results)
	}
}

// Bad input: a hook whose script does not exist is reported at start with
// its settings file, line and what to do; and when the model then makes
// the script (bypassPermissions lets it write there), the hook does not run
// it — the guarded call is refused instead — so nothing runs unsandboxed
// because of the missing file.
func TestMissingHookScriptReportedAndNeverRun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var results []string
	var h *clitest.Harness
	canary := ""
	record := func(next func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
		return func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
			return next(r)
		}
	}
	c := clitest.NewConv().On("plant the guard",
		func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
				"command": "mkdir -p src/guards && printf '#!/bin/sh\\ntouch " + canary + "\\n' > src/guards/check.sh && chmod +x src/guards/check.sh && echo planted"})}}
		},
		record(func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
				"file_path": filepath.Join(h.Dir, "src", "notes.txt"), "content": "hi\n"})}}
		}),
		record(clitest.Text("done")))
	h = clitest.New(t, c.Policy)
	canary = filepath.Join(filepath.Dir(h.Dir), "guard-ran")
	h.Write("src/main.go", "package main\n")
	settings := h.Write(".cohort/settings.json", `{
  "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/src/guards/check.sh"}]}]}
}`)
	out, errOut, code := h.Run("-p", "plant the guard", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{settings + ":2", "src/guards/check.sh", "does not exist", "create it, or fix the hook"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("the hook ran a script that appeared during the session")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "planted") || !strings.HasPrefix(results[1], "ERROR:") {
		t.Errorf("the Write the hook guards should have been refused; results %q", results)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "src", "notes.txt")); err == nil {
		t.Errorf("the guarded Write went through")
	}
}
