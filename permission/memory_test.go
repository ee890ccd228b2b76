package permission

import (
	"path/filepath"
	"testing"
)

// TestMemoryDir: file tools read and write inside a memory directory
// without asking in every mode but plan (reads in plan too); a path next to
// it, a link out of it and Bash get nothing from the carve-out, and deny
// rules still win.
func TestMemoryDir(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mem := filepath.Join(f.cohortHome, "projects", "-proj", "memory")
	f.mkdir("home/.cohort/projects/-proj/memory")
	f.symlink(f.path("outside"), "home/.cohort/projects/-proj/memory/out")
	write := func(p string) Request {
		return Request{Tool: "Write", Input: input("file_path", p, "content", "x")}
	}
	inside := filepath.Join(mem, "MEMORY.md")
	tests := []struct {
		name string
		mode Mode
		deny []string
		req  Request
		want Behavior
	}{
		{"write in default", ModeDefault, nil, write(inside), Allow},
		{"edit in acceptEdits", ModeAcceptEdits, nil, edit(inside), Allow},
		{"write in dontAsk", ModeDontAsk, nil, write(filepath.Join(mem, "topic.md")), Allow},
		{"read in plan", ModePlan, nil, read(inside), Allow},
		{"write in plan", ModePlan, nil, write(inside), Deny},
		{"beside the memory dir", ModeDefault, nil, write(filepath.Join(f.cohortHome, "projects", "-proj", "x.md")), Ask},
		{"through a link out of it", ModeDefault, nil, write(filepath.Join(mem, "out", "data")), Ask},
		{"climbing out with ..", ModeDefault, nil, write(filepath.Join(mem, "..", "x.jsonl")), Ask},
		{"deny rule wins", ModeDefault, []string{"Write(//" + mem[1:] + "/**)"}, write(inside), Deny},
		{"bash is not covered", ModeDefault, nil, bash("touch " + inside), Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.checkerWith(tt.mode, nil, tt.deny, nil)
			c.AddMemoryDir(mem)
			if d := f.decide(c, tt.req); d.Behavior != tt.want {
				t.Fatalf("%s: %s (%s), want %s", tt.req.Tool, d.Behavior, d.Reason, tt.want)
			}
		})
	}
	// Without the carve-out the same write asks.
	if d := f.decide(f.checkerWith(ModeDefault, nil, nil, nil), write(inside)); d.Behavior != Ask {
		t.Fatalf("without a memory dir: %s, want ask", d.Behavior)
	}
}
