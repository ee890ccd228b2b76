package dream

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/permission"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGuard: writes land only inside the memory dir (a link inside it
// pointing out does not count), and only read-only command lines run.
func TestGuard(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(root, "memory")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(mem, "up")); err != nil {
		t.Fatal(err)
	}
	var seen []string
	g := &guard{dir: mem, onWrite: func(p string) { seen = append(seen, p) }}
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(mem, "MEMORY.md"), true},
		{filepath.Join(mem, "new", "topic.md"), true},
		{filepath.Join(root, "project", "main.go"), false},
		{filepath.Join(mem, "..", "x.jsonl"), false},
		{filepath.Join(mem, "up", "escape.md"), false},
	} {
		if err := g.CheckWrite(tt.path); (err == nil) != tt.ok {
			t.Errorf("CheckWrite(%s): %v, want allowed %v", tt.path, err, tt.ok)
		} else if err != nil && !strings.Contains(err.Error(), mem) {
			t.Errorf("the refusal does not name the memory dir: %v", err)
		}
	}
	if len(seen) != 2 {
		t.Errorf("writes reported %v, want the two inside", seen)
	}
	for _, tt := range []struct {
		line string
		ok   bool
	}{
		{"ls -la " + mem, true},
		{"grep -rn build " + root + " | head -5", true},
		{"rm " + filepath.Join(mem, "MEMORY.md"), false},
		{"find " + mem + " -delete", false},
		{"cat a > " + filepath.Join(mem, "b"), false},
	} {
		if err := g.CheckCommand(tt.line, root); (err == nil) != tt.ok {
			t.Errorf("CheckCommand(%q): %v, want allowed %v", tt.line, err, tt.ok)
		}
	}
}

// TestPrompter: asks for reads are approved, everything else is refused
// with a reason that says what the dream may do.
func TestPrompter(t *testing.T) {
	t.Parallel()
	p := prompter{dir: "/m"}
	for tool, allow := range map[string]bool{"Read": true, "Grep": true, "Glob": true, "Write": false, "Edit": false, "Bash": false, "WebFetch": false} {
		d, err := p.Prompt(context.Background(), permission.PromptRequest{ToolName: tool, Input: []byte(`{"command": "rm x"}`)})
		if err != nil || d.Allow != allow || (!allow && !strings.HasPrefix(d.Message, "Refused: ")) {
			t.Errorf("%s: %+v %v, want allow %v", tool, d, err, allow)
		}
	}
}

// TestPromptGolden: the dream agent's system prompt and first message,
// byte for byte.
func TestPromptGolden(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 3, 1, 8, 30, 0, 0, time.UTC)
	got := System("/home/u/.cohort/projects/-src-app/memory") + "\n---\n" +
		Prompt("/home/u/.cohort/projects/-src-app/memory", "/home/u/.cohort/projects/-src-app", since, []string{"s2", "s1"}) + "---\n" +
		Prompt("/m", "/p", time.Time{}, nil)
	path := filepath.Join("testdata", "prompt.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("the prompt changed; if on purpose, run go test ./dream -update\ngot:\n%s", got)
	}
}

// TestReport: the result names what was touched.
func TestReport(t *testing.T) {
	t.Parallel()
	if got := Report([]string{"MEMORY.md", "build.md"}, " done \n"); got != "Improved 2 memories: MEMORY.md, build.md.\n\ndone" {
		t.Errorf("Report: %q", got)
	}
	if got := Report(nil, ""); got != "Improved 0 memories." {
		t.Errorf("Report of nothing: %q", got)
	}
}
