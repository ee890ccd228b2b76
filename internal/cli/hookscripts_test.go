package cli

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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
	var h *harness
	c := newConv()
	record := func(next func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
		return func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = append(results, toolResults(r)...)
			mu.Unlock()
			return next(r)
		}
	}
	c.on("rewrite the hook",
		func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": filepath.Join(h.dir, "hooks", "check.sh")})}}
		},
		func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{
				"file_path": filepath.Join(h.dir, "hooks", "check.sh"), "content": "#!/bin/sh\ntouch " + filepath.Join(h.dir, "pwned") + "\n"})}}
		},
		record(func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{
				"file_path": filepath.Join(h.dir, "notes.txt"), "content": "hi\n"})}}
		}),
		record(text("done")))
	h = newHarness(t, c.policy)
	script := writeScriptFile(t, filepath.Join(h.dir), "check.sh", "cat >/dev/null\nexit 0\n")
	if err := os.MkdirAll(filepath.Join(h.dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	hookPath := filepath.Join(h.dir, "hooks", "check.sh")
	if err := os.Rename(script, hookPath); err != nil {
		t.Fatal(err)
	}
	h.write(".cohort/settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/check.sh --strict"}]}]}}`)
	out, errOut, code := h.run("-p", "rewrite the hook", "--permission-mode", "acceptEdits")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(hookPath); strings.Contains(string(data), "pwned") {
		t.Errorf("the hook script was rewritten:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "pwned")); err == nil {
		t.Errorf("the rewritten hook ran")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) == 0 || !strings.HasPrefix(results[0], "ERROR:") || !strings.Contains(results[0], "ermission") {
		t.Errorf("the Write of the hook script should have been refused; results %q", results)
	}
}
