package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestDreamCommand: cohort dream consolidates now against the fake model:
// the agent's prompt names MEMORY.md and the memory dir, its write outside
// the dir and its rm are refused with reasons it reads, and the printed
// result names the file it touched; cohort memory then shows the index and
// where it lives.
func TestDreamCommand(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		system   string
		refusals []string
	)
	var h *clitest.Harness
	h = clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		mem := filepath.Join(h.ProjectDir(), "memory")
		index := filepath.Join(mem, "MEMORY.md")
		switch r.Turn() {
		case 0:
			mu.Lock()
			system = r.SystemText()
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Read", map[string]any{"file_path": index})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{
				fakeapi.ToolUseBlock("", "Write", map[string]any{"file_path": filepath.Join(h.Dir, "escape.md"), "content": "x"}),
				fakeapi.ToolUseBlock("", "Bash", map[string]any{"command": "rm " + index}),
				fakeapi.ToolUseBlock("", "Write", map[string]any{"file_path": index, "content": "- [Tests](tests.md) — run go test -race\n"}),
			}}
		}
		mu.Lock()
		for _, b := range r.Messages[len(r.Messages)-1].Content {
			if b.IsError {
				for _, c := range b.Content {
					refusals = append(refusals, c.Text)
				}
			}
		}
		mu.Unlock()
		return fakeapi.TextReply("Indexed the test notes.")
	})
	mem := filepath.Join(h.ProjectDir(), "memory")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("- [Old](old.md) — stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := h.Run("dream")
	if code != 0 {
		t.Fatalf("cohort dream: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "Improved 1 memory: MEMORY.md.") || !strings.Contains(stdout, "Indexed the test notes.") {
		t.Errorf("cohort dream printed %q", stdout)
	}
	mu.Lock()
	for _, want := range []string{"MEMORY.md", mem} {
		if !strings.Contains(system, want) {
			t.Errorf("the dream's system prompt does not name %s", want)
		}
	}
	if len(refusals) != 2 || !strings.Contains(refusals[0], "only inside the memory directory "+mem) || !strings.Contains(refusals[1], "read-only") {
		t.Errorf("refusals the agent read: %q", refusals)
	}
	mu.Unlock()
	if _, err := os.Stat(filepath.Join(h.Dir, "escape.md")); !os.IsNotExist(err) {
		t.Errorf("the write outside happened: %v", err)
	}
	stdout, stderr, code = h.Run("memory")
	if code != 0 || !strings.Contains(stdout, "Project memory: "+mem) || !strings.Contains(stdout, "run go test -race") || strings.Contains(stdout, "never") {
		t.Errorf("cohort memory: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestMemoryDirLinkedOut: a memory dir that is a symbolic link out of
// COHORT_HOME is refused by cohort memory and cohort dream, naming it.
func TestMemoryDirLinkedOut(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("never asked") })
	if err := os.MkdirAll(h.ProjectDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	mem := filepath.Join(h.ProjectDir(), "memory")
	if err := os.Symlink(elsewhere, mem); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"memory", "dream"} {
		_, stderr, code := h.Run(cmd)
		if code == 0 || !strings.Contains(stderr, mem) || !strings.Contains(stderr, "outside") {
			t.Errorf("cohort %s: exit %d, stderr %q", cmd, code, stderr)
		}
	}
	if len(h.Srv.Requests()) != 0 {
		t.Errorf("the model was asked %d times", len(h.Srv.Requests()))
	}
}
