package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/tool"
)

func globRun(t *testing.T, g tool.Tool, env *tool.Env, in map[string]any) (string, bool) {
	t.Helper()
	raw, _ := json.Marshal(in)
	if err := tool.ValidateInput(g.Def().InputSchema, raw); err != nil {
		t.Fatalf("input %s does not match the schema: %v", raw, err)
	}
	res, err := g.Run(t.Context(), env, raw)
	if err != nil {
		t.Fatalf("Run(%s): %v", raw, err)
	}
	return res.TextOf(), res.IsError
}

// globTree makes files whose modification times follow the order given:
// the first is the oldest.
func globTree(t *testing.T, names ...string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "proj")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestGlob(t *testing.T) {
	root := globTree(t, "old.go", "src/mid.go", "src/deep/new.go", "README.md", ".hidden.go", ".git/hooks/x.go", "src/z.ts", "src/tie_b.go")
	// Give two files the same time to check the tie-break by path.
	tie := time.Date(2024, 1, 1, 0, 2, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root, "src/tie_b.go"), tie, tie); err != nil {
		t.Fatal(err)
	}
	env := &tool.Env{Caller: tool.Caller{Cwd: root}}
	tests := []struct {
		name    string
		in      map[string]any
		want    string
		isError bool
	}{
		{"newest first, no .git, hidden included", map[string]any{"pattern": "**/*.go"},
			"ROOT/.hidden.go\nROOT/src/deep/new.go\nROOT/src/tie_b.go\nROOT/src/mid.go\nROOT/old.go", false},
		{"one level", map[string]any{"pattern": "*.go"}, "ROOT/.hidden.go\nROOT/old.go", false},
		{"relative path", map[string]any{"pattern": "*.go", "path": "src"}, "ROOT/src/tie_b.go\nROOT/src/mid.go", false},
		{"absolute path", map[string]any{"pattern": "**/*.{ts,md}", "path": "ROOT"}, "ROOT/src/z.ts\nROOT/README.md", false},
		{"absolute pattern", map[string]any{"pattern": "ROOT/src/**/new.go"}, "ROOT/src/deep/new.go", false},
		{"dot slash", map[string]any{"pattern": "./src/*.ts"}, "ROOT/src/z.ts", false},
		{"directories are not listed", map[string]any{"pattern": "src"}, "No files found", false},
		{"exact file", map[string]any{"pattern": "README.md"}, "ROOT/README.md", false},
		{".git is invisible", map[string]any{"pattern": ".git/**"}, "No files found", false},
		{"nothing", map[string]any{"pattern": "**/*.rs"}, "No files found", false},
		{"bad pattern", map[string]any{"pattern": "src/[a-"}, `invalid glob pattern "src/[a-" (check brackets and braces)`, true},
		{"missing dir", map[string]any{"pattern": "*", "path": "nope"}, "directory ROOT/nope does not exist or cannot be read: no such file or directory", true},
		{"file as dir", map[string]any{"pattern": "*", "path": "old.go"}, "ROOT/old.go is not a directory; pass a directory as path", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]any{}
			for k, v := range tt.in {
				in[k] = strings.ReplaceAll(v.(string), "ROOT", root)
			}
			text, isErr := globRun(t, NewGlob(GlobConfig{}), env, in)
			if diff := cmp.Diff(tt.want, strings.ReplaceAll(text, root, "ROOT")); diff != "" || isErr != tt.isError {
				t.Errorf("is_error %v; (-want +got):\n%s", isErr, diff)
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	root := globTree(t, "a.txt", "b.txt", "c.txt", "d.txt", "e.txt")
	text, _ := globRun(t, NewGlob(GlobConfig{MaxResults: 2}), &tool.Env{Caller: tool.Caller{Cwd: root}}, map[string]any{"pattern": "*.txt"})
	want := "ROOT/e.txt\nROOT/d.txt\n[Showing the 2 most recently modified of 5 files. Use a more specific pattern or path to see the rest.]"
	if diff := cmp.Diff(want, strings.ReplaceAll(text, root, "ROOT")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	g := NewGlob(GlobConfig{})
	if tr := g.Traits(nil); !tr.ReadOnly || !tr.ConcurrencySafe || g.Def().Name != "Glob" {
		t.Errorf("Def/Traits wrong")
	}
}
