package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestLoadIndexLimits: an index within the limits loads whole; one over
// either limit is cut at a line boundary with a note naming the sizes.
func TestLoadIndexLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200)
	tests := []struct {
		name      string
		lines     int
		line      string
		truncated bool
		kept      int
	}{
		{"small", 3, "- [A](a.md) — hook", false, 3},
		{"too many lines", 250, "- [A](a.md) — hook", true, MaxIndexLines},
		{"too many bytes", 150, long, true, MaxIndexBytes / (len(long) + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			var b strings.Builder
			for range tt.lines {
				b.WriteString(tt.line + "\n")
			}
			if err := os.WriteFile(filepath.Join(dir, IndexName), []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			ix, ok, err := LoadIndex(dir, nil)
			if err != nil || !ok {
				t.Fatalf("LoadIndex: %v %v", ok, err)
			}
			if ix.Truncated != tt.truncated || ix.Lines != tt.lines {
				t.Fatalf("truncated %v lines %d, want %v %d", ix.Truncated, ix.Lines, tt.truncated, tt.lines)
			}
			body, note, _ := strings.Cut(ix.Content, "\n\n[…")
			if got := strings.Count(body, "\n") + 1; got != tt.kept {
				t.Errorf("kept %d lines, want %d", got, tt.kept)
			}
			if len(body) > MaxIndexBytes {
				t.Errorf("kept %d bytes, over %d", len(body), MaxIndexBytes)
			}
			if tt.truncated && !strings.Contains(note, "was cut here") {
				t.Errorf("no truncation note: %q", note)
			}
			if !tt.truncated && note != "" {
				t.Errorf("a note on an index within the limits: %q", note)
			}
			if ctx := Context(dir, ix, ok); !strings.Contains(ctx, "Loaded memory files: "+ix.Path) || !strings.Contains(ctx, dir) {
				t.Errorf("the context does not say what was loaded from where:\n%s", ctx)
			}
		})
	}
}

// TestLoadIndexMissing: no index is no error and says nothing was loaded.
func TestLoadIndexMissing(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	if _, ok, err := LoadIndex(dir, nil); ok || err != nil {
		t.Fatalf("LoadIndex of an empty dir: %v %v", ok, err)
	}
	if ctx := Context(dir, Index{}, false); !strings.Contains(ctx, "nothing was loaded") {
		t.Errorf("context %q", ctx)
	}
}

// TestPrepareRefusesLinksOut: a memory dir that is a link out of its base
// is refused naming it; a link that stays inside is fine; a missing dir is
// created.
func TestPrepareRefusesLinksOut(t *testing.T) {
	t.Parallel()
	root := tempDir(t)
	home := filepath.Join(root, "cohort")
	outside := filepath.Join(root, "elsewhere")
	for _, d := range []string{home, outside, filepath.Join(home, "projects", "p"), filepath.Join(home, "inner")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(home, "projects", "fresh", "memory")
	if got, err := Prepare(home, fresh); err != nil || got != fresh {
		t.Fatalf("Prepare of a new dir: %q %v", got, err)
	}
	out := filepath.Join(home, "projects", "p", "memory")
	if err := os.Symlink(outside, out); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(home, out); !errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "remove the link") {
		t.Fatalf("Prepare of a link out: %v", err)
	}
	in := filepath.Join(home, "projects", "q")
	if err := os.Symlink(filepath.Join(home, "inner"), in); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(home, filepath.Join(in, "memory")); err != nil {
		t.Fatalf("Prepare of a link inside the base: %v", err)
	}
}

// TestAgentDir: each scope has its place; names that would climb out are
// refused.
func TestAgentDir(t *testing.T) {
	t.Parallel()
	for scope, want := range map[string]string{
		"user":    "/h/agent-memory/rev",
		"project": "/p/.cohort/agent-memory/rev",
		"local":   "/p/.cohort/agent-memory-local/rev",
	} {
		if got, _, err := AgentDir(scope, "rev", "/h", "/p"); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", scope, got, err, want)
		}
	}
	for _, bad := range []string{"", "..", "a/b"} {
		if _, _, err := AgentDir("user", bad, "/h", "/p"); err == nil {
			t.Errorf("AgentDir accepted %q", bad)
		}
	}
}

// TestLoadIndexRefusesLinks: an index that is a link out of its memory
// dir (to a secret of the project) or to a file a deny rule covers is not
// loaded, and the error names it.
func TestLoadIndexRefusesLinks(t *testing.T) {
	t.Parallel()
	dir, project := tempDir(t), tempDir(t)
	key := filepath.Join(project, "key")
	if err := os.WriteFile(key, []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(key, filepath.Join(dir, IndexName)); err != nil {
		t.Fatal(err)
	}
	ix, ok, err := LoadIndex(dir, nil)
	if ok || ix.Content != "" || err == nil || !strings.Contains(err.Error(), filepath.Join(dir, IndexName)) {
		t.Errorf("a link out of the dir: %v %q %v", ok, ix.Content, err)
	}
	inside := filepath.Join(dir, "topic.md")
	if err := os.WriteFile(inside, []byte("- a note"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, IndexName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("topic.md", filepath.Join(dir, IndexName)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := LoadIndex(dir, nil); !ok || err != nil {
		t.Errorf("a link inside the dir: %v %v", ok, err)
	}
	if _, ok, err := LoadIndex(dir, func(p string) bool { return p == inside }); ok || err == nil {
		t.Errorf("a link to a denied file: %v %v", ok, err)
	}
}
