package search

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// benchTree writes 400 source files of 200 lines each.
func benchTree(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	line := strings.Repeat("lorem ipsum dolor sit amet ", 3) + "\n"
	for d := range 20 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 20 {
			content := strings.Repeat(line, 199) + fmt.Sprintf("func needle%d() {}\n", f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

func benchmarkGrep(b *testing.B, cfg GrepConfig, mode string) {
	root := benchTree(b)
	g := NewGrep(cfg)
	env := &tool.Env{Caller: tool.Caller{Cwd: root}}
	input := []byte(`{"pattern":"needle1[0-9]","output_mode":"` + mode + `"}`)
	for b.Loop() {
		res, err := g.Run(b.Context(), env, input)
		if err != nil || res.IsError {
			b.Fatal(err, res.TextOf())
		}
	}
}

func BenchmarkGrepGoFiles(b *testing.B) { benchmarkGrep(b, GrepConfig{Backend: BackendGo}, modeFiles) }
func BenchmarkGrepGoContent(b *testing.B) {
	benchmarkGrep(b, GrepConfig{Backend: BackendGo}, modeContent)
}

func BenchmarkGrepRipgrepFiles(b *testing.B) {
	if rgOrNil() == nil {
		b.Skip("rg not installed")
	}
	benchmarkGrep(b, GrepConfig{Backend: BackendRipgrep}, modeFiles)
}

func BenchmarkGlob(b *testing.B) {
	root := benchTree(b)
	g := NewGlob(GlobConfig{})
	env := &tool.Env{Caller: tool.Caller{Cwd: root}}
	for b.Loop() {
		if res, err := g.Run(b.Context(), env, []byte(`{"pattern":"**/f1*.go"}`)); err != nil || res.IsError {
			b.Fatal(err)
		}
	}
}
