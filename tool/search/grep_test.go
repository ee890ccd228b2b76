package search

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixtureFiles is a small repository exercising ripgrep's filters.
var fixtureFiles = map[string]string{
	".git/HEAD":              "ref: refs/heads/main foo\n",
	".git/info/exclude":      "excluded.txt\n",
	".gitignore":             "ignored.txt\nbuild/\n*.log\n!keep.log\n",
	".ignore":                "dotignored.md\n",
	".hidden.txt":            "foo hidden\n",
	".secret.go":             "foo secret\n",
	"a.go":                   "package a\n\nfunc Foo() {}\n// foo bar\n",
	"b.py":                   "def foo():\n    return 1\n",
	"c.js":                   "const FOO = 1;\n",
	"d.md":                   "# Foo\nsome foo text\n",
	"dotignored.md":          "foo\n",
	"ignored.txt":            "foo\n",
	"excluded.txt":           "foo\n",
	"app.log":                "foo\n",
	"keep.log":               "foo log\n",
	"build/out.go":           "foo\n",
	"bin.dat":                "foo\x00bar\n",
	"multi.txt":              "start\nfoo\nbar\nend foo\nbar\n",
	"nested/.gitignore":      "*.txt\n!important.txt\n",
	"nested/a.txt":           "foo\n",
	"nested/important.txt":   "foo\n",
	"nested/deep/.gitignore": "!b.txt\n",
	"nested/deep/b.txt":      "foo\n",
	"prec/.gitignore":        "q.txt\n",
	"prec/.ignore":           "!q.txt\n!r.txt\n",
	"prec/.rgignore":         "r.txt\n",
	"prec/q.txt":             "foo\n",
	"prec/r.txt":             "foo\n",
	"sub/x.go":               "foo one\nfoo two\nthree\nfour\nfive\nfoo six\n",
	"sub/y.ts":               "let foo = 1;\n",
	"sub/.sub-hidden/z.go":   "foo\n",
	"sub-x.txt":              "foo\n",
}

// fixture writes fixtureFiles under a fresh directory, every file with the
// same modification time, and returns the directory.
func fixture(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, content := range fixtureFiles {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, base, base); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type backendCase struct {
	name string
	cfg  GrepConfig
}

// backends are the Grep backends available here: Go always, rg when
// installed (CI installs it).
func backends(t *testing.T) []backendCase {
	list := []backendCase{{"go", GrepConfig{Backend: BackendGo}}}
	if _, err := exec.LookPath("rg"); err == nil {
		list = append(list, backendCase{"rg", GrepConfig{Backend: BackendRipgrep}})
	} else {
		t.Log("rg not installed: only the Go backend is checked")
	}
	return list
}

func grep(t *testing.T, g tool.Tool, env *tool.Env, in map[string]any) (string, bool) {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.ValidateInput(g.Def().InputSchema, raw); err != nil {
		t.Fatalf("input %s does not match the schema: %v", raw, err)
	}
	res, err := g.Run(t.Context(), env, raw)
	if err != nil {
		t.Fatalf("Run(%s): %v", raw, err)
	}
	return res.TextOf(), res.IsError
}

// grepCases run through every backend and must give the same text.
var grepCases = []struct {
	name    string
	in      map[string]any
	want    string
	isError bool
}{
	{name: "files by default, filters applied", in: map[string]any{"pattern": "foo"}, want: `Found 11 files
ROOT/a.go
ROOT/b.py
ROOT/d.md
ROOT/keep.log
ROOT/multi.txt
ROOT/nested/deep/b.txt
ROOT/nested/important.txt
ROOT/prec/q.txt
ROOT/sub-x.txt
ROOT/sub/x.go
ROOT/sub/y.ts`},
	{name: "content with glob that overrides hidden", in: map[string]any{"pattern": "foo", "output_mode": "content", "glob": "*.go"}, want: `ROOT/.secret.go:1:foo secret
ROOT/a.go:4:// foo bar
ROOT/sub/x.go:1:foo one
ROOT/sub/x.go:2:foo two
ROOT/sub/x.go:6:foo six`},
	{name: "context groups and separators", in: map[string]any{"pattern": "foo", "output_mode": "content", "-C": 1, "path": "sub"}, want: `ROOT/sub/x.go:1:foo one
ROOT/sub/x.go:2:foo two
ROOT/sub/x.go-3-three
--
ROOT/sub/x.go-5-five
ROOT/sub/x.go:6:foo six
--
ROOT/sub/y.ts:1:let foo = 1;`},
	{name: "context field wins over -C", in: map[string]any{"pattern": "six", "output_mode": "content", "-C": 5, "context": 1, "path": "sub/x.go"}, want: "5-five\n6:foo six"},
	{name: "-B overrides context", in: map[string]any{"pattern": "three", "output_mode": "content", "context": 1, "-B": 2, "path": "sub/x.go"}, want: "1-foo one\n2-foo two\n3:three\n4-four"},
	{name: "single file, after context, no line numbers", in: map[string]any{"pattern": "foo", "output_mode": "content", "-A": 1, "-n": false, "path": "ROOT/sub/x.go"},
		want: "foo one\nfoo two\nthree\n--\nfoo six"},
	{name: "count", in: map[string]any{"pattern": "foo", "output_mode": "count"}, want: `ROOT/a.go:1
ROOT/b.py:1
ROOT/d.md:1
ROOT/keep.log:1
ROOT/multi.txt:2
ROOT/nested/deep/b.txt:1
ROOT/nested/important.txt:1
ROOT/prec/q.txt:1
ROOT/sub/x.go:3
ROOT/sub/y.ts:1
ROOT/sub-x.txt:1
Found 14 matching lines in 11 files.`},
	{name: "count on a single file", in: map[string]any{"pattern": "foo", "output_mode": "count", "path": "sub/x.go"},
		want: "ROOT/sub/x.go:3\nFound 3 matching lines in 1 file."},
	{name: "case-insensitive with type", in: map[string]any{"pattern": "foo", "-i": true, "type": "js"}, want: "Found 1 file\nROOT/c.js"},
	{name: "type respects ignore files", in: map[string]any{"pattern": "foo", "type": "md"}, want: "Found 1 file\nROOT/d.md"},
	{name: "type ts", in: map[string]any{"pattern": "foo", "type": "ts", "output_mode": "content"}, want: "ROOT/sub/y.ts:1:let foo = 1;"},
	{name: "exclude glob", in: map[string]any{"pattern": "foo", "glob": "!*.md !sub"}, want: `Found 8 files
ROOT/a.go
ROOT/b.py
ROOT/keep.log
ROOT/multi.txt
ROOT/nested/deep/b.txt
ROOT/nested/important.txt
ROOT/prec/q.txt
ROOT/sub-x.txt`},
	{name: "brace glob", in: map[string]any{"pattern": "foo", "glob": "*.{go,py}"}, want: "Found 4 files\nROOT/.secret.go\nROOT/a.go\nROOT/b.py\nROOT/sub/x.go"},
	{name: "anchored glob", in: map[string]any{"pattern": "foo", "glob": "sub/*.go"}, want: "Found 1 file\nROOT/sub/x.go"},
	{name: "multiline", in: map[string]any{"pattern": `foo\nbar`, "multiline": true, "output_mode": "content", "path": "multi.txt"},
		want: "2:foo\n3:bar\n4:end foo\n5:bar"},
	{name: "multiline dot matches newline", in: map[string]any{"pattern": "start.*end", "multiline": true, "output_mode": "content", "path": "multi.txt"},
		want: "1:start\n2:foo\n3:bar\n4:end foo"},
	{name: "head_limit and offset", in: map[string]any{"pattern": "foo", "output_mode": "content", "head_limit": 3, "offset": 2}, want: `ROOT/d.md:2:some foo text
ROOT/keep.log:1:foo log
ROOT/multi.txt:2:foo
[Showing lines 3–5 of 14; use offset=5 to see more.]`},
	{name: "offset to the end", in: map[string]any{"pattern": "foo", "offset": 10}, want: "Found 11 files\nROOT/sub/y.ts\n[Showing files 11–11 of 11.]"},
	{name: "offset past the end", in: map[string]any{"pattern": "foo", "output_mode": "count", "offset": 50},
		want: "[offset 50 is past the end: there are 11 entries.]\nFound 14 matching lines in 11 files."},
	{name: "explicit ignored file is searched", in: map[string]any{"pattern": "foo", "path": "ignored.txt"}, want: "Found 1 file\nROOT/ignored.txt"},
	{name: "explicit hidden directory is searched", in: map[string]any{"pattern": "foo", "path": "sub/.sub-hidden"}, want: "Found 1 file\nROOT/sub/.sub-hidden/z.go"},
	{name: "pattern starting with a dash", in: map[string]any{"pattern": "-foo", "path": "sub"}, want: "No files found"},
	{name: "regex classes", in: map[string]any{"pattern": `^\s+return \d$`, "output_mode": "content"}, want: "ROOT/b.py:2:    return 1"},
	{name: "no match", in: map[string]any{"pattern": "zzz", "output_mode": "content"}, want: "No matches found"},
	{name: "no match count", in: map[string]any{"pattern": "zzz", "output_mode": "count"}, want: "No matches found"},
	{name: "newline needs multiline", in: map[string]any{"pattern": `foo\nbar`},
		want: `the pattern "foo\\nbar" contains a line break; set multiline to true to match across lines`, isError: true},
	{name: "bad regex", in: map[string]any{"pattern": "a("},
		want: "invalid regular expression \"a(\": error parsing regexp: missing closing ): `a(`", isError: true},
	{name: "unknown type", in: map[string]any{"pattern": "a", "type": "cobol"}, isError: true,
		want: `unknown file type "cobol"; known types: ` + typeNames() + ` (or use glob, e.g. "*.ext")`},
	{name: "missing path", in: map[string]any{"pattern": "a", "path": "nope"}, isError: true,
		want: "path ROOT/nope does not exist or cannot be read: no such file or directory"},
}

func TestGrepBackends(t *testing.T) {
	root := fixture(t)
	env := &tool.Env{Caller: tool.Caller{Cwd: root}}
	for _, b := range backends(t) {
		g := NewGrep(b.cfg)
		for _, tt := range grepCases {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				in := map[string]any{}
				for k, v := range tt.in {
					if s, ok := v.(string); ok && k == "path" {
						v = strings.ReplaceAll(s, "ROOT", root)
					}
					in[k] = v
				}
				text, isErr := grep(t, g, env, in)
				text = strings.ReplaceAll(text, root, "ROOT")
				if diff := cmp.Diff(tt.want, text); diff != "" || isErr != tt.isError {
					t.Errorf("is_error %v (want %v); text (-want +got):\n%s", isErr, tt.isError, diff)
				}
			})
		}
	}
}

func TestGrepFilesNewestFirst(t *testing.T) {
	root := fixture(t)
	now := time.Now()
	for name, age := range map[string]time.Duration{"b.py": 0, "sub/x.go": time.Hour} {
		if err := os.Chtimes(filepath.Join(root, name), now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range backends(t) {
		text, _ := grep(t, NewGrep(b.cfg), &tool.Env{Caller: tool.Caller{Cwd: root}}, map[string]any{"pattern": "foo", "head_limit": 4})
		want := "Found 11 files\nROOT/b.py\nROOT/sub/x.go\nROOT/a.go\nROOT/d.md\n[Showing files 1–4 of 11; use offset=4 to see more.]"
		if diff := cmp.Diff(want, strings.ReplaceAll(text, root, "ROOT")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", b.name, diff)
		}
	}
}

// TestGrepGoOnly covers behaviour where rg versions differ or rg is not
// involved.
func TestGrepGoOnly(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"m.txt":     "foo foo\nfoo\nx foo\nbar y\n",
		"late.bin":  "foo\n" + strings.Repeat("x", 10000) + "\x00",
		"long.txt":  strings.Repeat("é", 600) + "foo\n",
		"crlf.txt":  "foo\r\nbar\r\n",
		"nofinal":   "a\nfoo",
		".git/keep": "foo\n",
	}
	for name, c := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := os.Chtimes(p, base, base); err != nil {
			t.Fatal(err)
		}
	}
	g := NewGrep(GrepConfig{Backend: BackendGo})
	env := &tool.Env{Caller: tool.Caller{Cwd: dir}}
	tests := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"pattern": "foo", "multiline": true, "output_mode": "count", "path": "m.txt"}, "ROOT/m.txt:3\nFound 3 matching lines in 1 file."},
		{map[string]any{"pattern": `foo\nx|y`, "multiline": true, "output_mode": "count", "path": "m.txt"}, "ROOT/m.txt:2\nFound 2 matching lines in 1 file."},
		{map[string]any{"pattern": "foo", "output_mode": "content", "path": "long.txt"}, "1:" + strings.Repeat("é", 498) + " … [105 more characters]"},
		{map[string]any{"pattern": "foo$", "output_mode": "content", "path": "crlf.txt"}, "No matches found"},
		{map[string]any{"pattern": `\Afoo`, "output_mode": "content", "path": "m.txt"}, "1:foo foo\n2:foo"},
		{map[string]any{"pattern": `y\z`, "output_mode": "content", "path": "m.txt"}, "4:bar y"},
		{map[string]any{"pattern": "foo", "output_mode": "content", "path": "nofinal"}, "2:foo"},
		{map[string]any{"pattern": "foo"}, "Found 4 files\nROOT/crlf.txt\nROOT/long.txt\nROOT/m.txt\nROOT/nofinal"},
	}
	for _, tt := range tests {
		text, isErr := grep(t, g, env, tt.in)
		if diff := cmp.Diff(tt.want, strings.ReplaceAll(text, dir, "ROOT")); diff != "" || isErr {
			t.Errorf("%v: is_error %v, (-want +got):\n%s", tt.in, isErr, diff)
		}
	}
}

func TestGrepOutputCap(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for range 2000 {
		b.WriteString("match this line\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, be := range backends(t) {
		be.cfg.MaxOutput = 1000
		text, _ := grep(t, NewGrep(be.cfg), &tool.Env{Caller: tool.Caller{Cwd: dir}}, map[string]any{"pattern": "match", "output_mode": "content"})
		if len(text) > 1000 || !strings.Contains(text, "[Output cut after") || !strings.HasPrefix(text, filepath.Join(dir, "big.txt")+":1:match this line\n") {
			t.Errorf("%s: output not capped (%d bytes):\n%s", be.name, len(text), text)
		}
	}
}

func TestGrepRawTruncation(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i))+".txt"), []byte(strings.Repeat("hit\n", 100)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q := &query{pattern: "hit", root: dir, mode: modeContent, lineNumbers: true, maxRaw: 2000}
	for _, b := range []backend{goBackend{}, rgOrNil()} {
		if b == nil {
			continue
		}
		out, truncated, err := b.search(t.Context(), q)
		if err != nil || !truncated || len(out) > 4000 || len(out) == 0 {
			t.Errorf("%T: %d bytes, truncated %v, err %v", b, len(out), truncated, err)
		}
	}
}

func rgOrNil() backend {
	if p, err := exec.LookPath("rg"); err == nil {
		return rgBackend{path: p}
	}
	return nil
}

func TestGrepMissingRipgrep(t *testing.T) {
	g := NewGrep(GrepConfig{Backend: BackendRipgrep, Ripgrep: "cohort-no-such-rg"})
	raw := json.RawMessage(`{"pattern":"x"}`)
	if _, err := g.Run(t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}}, raw); err == nil {
		t.Errorf("a missing rg is not an error")
	}
	auto := NewGrep(GrepConfig{Ripgrep: "cohort-no-such-rg"})
	if res, err := auto.Run(t.Context(), &tool.Env{Caller: tool.Caller{Cwd: t.TempDir()}}, raw); err != nil || res.TextOf() != "No files found" {
		t.Errorf("auto without rg: %q, %v", res.TextOf(), err)
	}
}

func TestGrepDef(t *testing.T) {
	g := NewGrep(GrepConfig{})
	if tr := g.Traits(nil); !tr.ReadOnly || !tr.ConcurrencySafe || g.Def().Name != "Grep" {
		t.Errorf("Def/Traits wrong: %s %+v", g.Def().Name, tr)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(g.Def().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pattern", "path", "glob", "output_mode", "-A", "-B", "-C", "context", "-n", "-i", "type", "head_limit", "offset", "multiline"} {
		if _, ok := schema.Properties[f]; !ok {
			t.Errorf("schema lacks %q", f)
		}
	}
}

func TestTypeTableCompiles(t *testing.T) {
	for name := range fileTypes {
		if _, err := newTypeMatcher(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	m, _ := newTypeMatcher("make")
	for _, f := range []string{"Makefile", "dir/GNUmakefile", "x.mk"} {
		if !m.match(f) {
			t.Errorf("make does not match %s", f)
		}
	}
}

// A match on a line longer than the raw-output cap must never read as "no
// match": the result says the output was cut.
func TestGrepContentLongLineSaysCut(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 9<<20) + " needle\n"
	if err := os.WriteFile(filepath.Join(dir, "long.txt"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, be := range backends(t) {
		text, _ := grep(t, NewGrep(be.cfg), &tool.Env{Caller: tool.Caller{Cwd: dir}}, map[string]any{"pattern": "needle", "output_mode": "content"})
		if strings.Contains(text, "No matches") || !strings.Contains(text, "output was cut") {
			t.Errorf("%s: content mode on a 9 MiB line says %q, want that the output was cut", be.name, text)
		}
		count, _ := grep(t, NewGrep(be.cfg), &tool.Env{Caller: tool.Caller{Cwd: dir}}, map[string]any{"pattern": "needle", "output_mode": "count"})
		if !strings.Contains(count, "1 matching line") {
			t.Errorf("%s: count mode = %q, want 1 matching line", be.name, count)
		}
	}
}
