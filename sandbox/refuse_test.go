//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refuseFixture is a working directory with a git dir, .cohort settings,
// .mcp.json and a hook script's folder, no .claude, and its sandbox.
func refuseFixture(t testing.TB) (*Sandbox, string) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	w := filepath.Join(root, "w")
	for _, d := range []string{".git/hooks", ".cohort", "tools/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".mcp.json", ".cohort/settings.json", "tools/hooks/check.sh", "src/a.go"} {
		if err := os.WriteFile(filepath.Join(w, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := New(Config{Home: root, TempRoot: root, Protected: []string{filepath.Join(w, "tools/hooks/check.sh")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, w
}

// TestWriteRefusal: the file tools' second layer refuses what the
// writing policy protects (existing or not) and nothing else.
func TestWriteRefusal(t *testing.T) {
	sb, w := refuseFixture(t)
	for rel, want := range map[string]string{
		".git/hooks/pre-commit": "protected path",
		".git/config":           "protected path",
		".mcp.json":             "protected path",
		".cohort/settings.json": "protected path",
		".cohort/agents/x.md":   "protected path",
		"tools/hooks/check.sh":  "protected path",
		"tools/hooks/new.sh":    "protected path",
		".claude/settings.json": "takes no new .claude",
		".claude/agents/x.md":   "takes no new .claude",
		"src/a.go":              "",
		"src/new/b.go":          "",
		"README.md":             "",
		"tools/other.sh":        "",
	} {
		got := sb.WriteRefusal(w, filepath.Join(w, rel))
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: WriteRefusal = %q, want %q", rel, got, want)
		}
	}
}

// BenchmarkWriteRefusal is the check's cost per file-tool write, with the
// policy built (no Bash call yet) and with it set up by a launcher.
func BenchmarkWriteRefusal(b *testing.B) {
	sb, w := refuseFixture(b)
	p := filepath.Join(w, "src", "a.go")
	b.Run("built", func(b *testing.B) {
		for b.Loop() {
			sb.WriteRefusal(w, p)
		}
	})
	if _, err := sb.Launcher(b.Context(), w, Writing); err != nil {
		b.Fatal(err)
	}
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			sb.WriteRefusal(w, p)
		}
	})
}
