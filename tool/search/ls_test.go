package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

func runLS(t *testing.T, l tool.Tool, input any) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(input)
	if err := tool.ValidateInput(l.Def().InputSchema, raw); err != nil {
		t.Fatalf("input %s does not match the schema: %v", raw, err)
	}
	res, err := l.Run(t.Context(), &tool.Env{}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLS(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b.go", "a/x.go", "a/y.log", "a/deep/z.txt", ".hidden/secret", "__pycache__/m.pyc", "build/out.o", ".env"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runLS(t, NewLS(LSConfig{}), map[string]any{"path": dir, "ignore": []string{"*.log", "build"}})
	want := "- " + dir + "/\n  - a/\n    - deep/\n      - z.txt\n    - x.go\n  - b.go"
	if res.IsError || res.TextOf() != want {
		t.Fatalf("listing:\n%s\nwant:\n%s", res.TextOf(), want)
	}
	res = runLS(t, NewLS(LSConfig{MaxEntries: 2}), map[string]any{"path": dir})
	if !strings.Contains(res.TextOf(), "[Stopped after 2 entries") || strings.Count(res.TextOf(), "\n  ") > 3 {
		t.Errorf("capped listing:\n%s", res.TextOf())
	}
	for _, tt := range []struct {
		input any
		says  string
	}{
		{map[string]any{"path": "rel/dir"}, "is not absolute"},
		{map[string]any{"path": filepath.Join(dir, "b.go")}, "is a file, not a directory"},
		{map[string]any{"path": filepath.Join(dir, "missing")}, "cannot list"},
		{map[string]any{"path": dir, "ignore": []string{"[x"}}, "not a valid glob"},
	} {
		if res := runLS(t, NewLS(LSConfig{}), tt.input); !res.IsError || !strings.Contains(res.TextOf(), tt.says) {
			t.Errorf("%v: %q (is_error %v), want %q", tt.input, res.TextOf(), res.IsError, tt.says)
		}
	}
}
