package hook

import (
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// BenchmarkPreToolUse measures what a hook adds to a tool call: nothing
// but a look-up when no matcher applies, one process group otherwise.
func BenchmarkPreToolUse(b *testing.B) {
	set, probs := loadSet(filepath.Join(b.TempDir(), "settings.json"),
		[]byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "cat >/dev/null"}]}]}}`))
	if len(probs) > 0 {
		b.Fatal(probs)
	}
	dir := b.TempDir()
	s := NewRunner(Config{Hooks: set}).For(Subject{Caller: tool.Caller{Cwd: dir, ID: "a", Depth: 1}})
	for _, tool := range []string{"Read", "Bash"} {
		b.Run(tool, func(b *testing.B) {
			c := call(dir, tool, `{"command": "ls"}`)
			for b.Loop() {
				if v := s.PreToolUse(b.Context(), c); v.Deny {
					b.Fatal(v.Reason)
				}
			}
		})
	}
}
