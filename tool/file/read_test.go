package file

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	long := strings.Repeat("x", 2500)
	tests := []struct {
		name    string
		cfg     ReadConfig
		content string
		input   map[string]any
		want    outcome
		partial bool
	}{
		{name: "whole file", content: "alpha\nbeta\n\tgamma\n",
			want: outcome{"     1\talpha\n     2\tbeta\n     3\t\tgamma", false}},
		{name: "no final newline", content: "a\nb",
			want: outcome{"     1\ta\n     2\tb", false}},
		{name: "crlf shown without cr", content: "a\r\nb\r\n",
			want: outcome{"     1\ta\n     2\tb", false}},
		{name: "offset and limit", content: numbered(1, 10), input: map[string]any{"offset": 3, "limit": 2},
			want:    outcome{"     3\tline 3\n     4\tline 4\n[The file continues after line 4; Read again with offset=5 to see more.]", false},
			partial: true},
		{name: "offset zero means the start", content: "a\nb\n", input: map[string]any{"offset": 0},
			want: outcome{"     1\ta\n     2\tb", false}},
		{name: "offset to the end", content: numbered(1, 3), input: map[string]any{"offset": 3},
			want: outcome{"     3\tline 3", false}, partial: true},
		{name: "offset past the end", content: numbered(1, 3), input: map[string]any{"offset": 10},
			want: outcome{"(FILE has 3 lines; offset 10 is past the end.)", false}, partial: true},
		{name: "default limit", cfg: ReadConfig{DefaultLimit: 2}, content: numbered(1, 5),
			want:    outcome{"     1\tline 1\n     2\tline 2\n[The file continues after line 2; Read again with offset=3 to see more.]", false},
			partial: true},
		{name: "limit equal to length is whole", content: numbered(1, 2), input: map[string]any{"limit": 2},
			want: outcome{"     1\tline 1\n     2\tline 2", false}},
		{name: "output byte cap", cfg: ReadConfig{MaxOutputBytes: 30}, content: numbered(1, 5),
			want:    outcome{"     1\tline 1\n     2\tline 2\n[Output stopped after line 2 to stay under 30 bytes; Read again with offset=3 to continue.]", false},
			partial: true},
		{name: "long line cut", content: long + "\nshort\n",
			want: outcome{"     1\t" + long[:2000] + " … [line cut]\n     2\tshort", false}},
		{name: "multibyte line cut by characters", cfg: ReadConfig{MaxLineChars: 3}, content: "äöüß\n",
			want: outcome{"     1\täöü … [line cut]", false}},
		{name: "empty file", content: "",
			want: outcome{"(FILE exists but is empty.)", false}},
		{name: "binary content", content: "abc\x00def",
			want: outcome{"FILE looks like a binary file (it contains NUL bytes); Read only shows text. Inspect it through Bash (file, xxd, strings) if you must", true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			path := filepath.Join(env.Cwd, "f.txt")
			writeTestFile(t, path, tt.content)
			input := map[string]any{"file_path": path}
			for k, v := range tt.input {
				input[k] = v
			}
			got := outcomeOf(call(t, NewRead(tt.cfg), env, input))
			got.Text = strings.ReplaceAll(got.Text, path, "FILE")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			state, ok := env.Files.Get(path)
			if tt.want.IsError {
				if ok {
					t.Errorf("a failed read was recorded")
				}
				return
			}
			info, _ := os.Stat(path)
			want := tool.FileState{ModTime: info.ModTime(), Size: info.Size(), Partial: tt.partial}
			if diff := cmp.Diff(want, state); !ok || diff != "" {
				t.Errorf("recorded state (-want +got) (present %v):\n%s", ok, diff)
			}
		})
	}
}

func TestReadFailures(t *testing.T) {
	env := newEnv(t)
	dir := env.Cwd
	writeTestFile(t, filepath.Join(dir, "config.yaml"), "a: 1\n")
	writeTestFile(t, filepath.Join(dir, "archive.zip"), "looks like text")
	writeTestFile(t, filepath.Join(dir, "fake.png"), "not an image")
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		path  string
		parts []string
	}{
		{"missing with suggestion", filepath.Join(dir, "config.yml"), []string{"File does not exist: " + dir + "/config.yml", "Similar names in that directory: config.yaml"}},
		{"missing directory", filepath.Join(dir, "nope", "x.go"), []string{"the directory " + dir + "/nope does not exist either"}},
		{"directory", dir, []string{"is a directory, not a file"}},
		{"relative", "sub/x.go", []string{`file_path must be an absolute path; got "sub/x.go"`, filepath.Join(dir, "sub/x.go")}},
		{"binary extension", filepath.Join(dir, "archive.zip"), []string{"is a binary file (.zip)"}},
		{"not really an image", filepath.Join(dir, "fake.png"), []string{"has an image extension but its content is not"}},
		{"fifo never blocks", fifo, []string{"is not a regular file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": tt.path}))
			wantContains(t, got, true, tt.parts...)
		})
	}
	if env.Files.Len() != 0 {
		t.Errorf("failed reads were recorded: %d entries", env.Files.Len())
	}
}

func TestReadHugeFiles(t *testing.T) {
	env := newEnv(t)
	many := filepath.Join(env.Cwd, "many.txt")
	writeTestFile(t, many, strings.Repeat(strings.Repeat("y", 39)+"\n", 60_000))
	res := outcomeOf(call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": many}))
	wantContains(t, res, false, "  2000\t", "[The file continues after line 2000; Read again with offset=2001 to see more.]")
	if strings.Contains(res.Text, "  2001\t") {
		t.Errorf("more than 2000 lines returned")
	}
	res = outcomeOf(call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": many, "offset": 59_999}))
	wantContains(t, res, false, " 59999\t", " 60000\t")

	oneLine := filepath.Join(env.Cwd, "oneline.txt")
	writeTestFile(t, oneLine, strings.Repeat("z", 5<<20))
	res = outcomeOf(call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": oneLine}))
	if want := "     1\t" + strings.Repeat("z", 2000) + " … [line cut]"; res.Text != want || res.IsError {
		t.Errorf("huge single line: got %d bytes, error %v", len(res.Text), res.IsError)
	}
}

func TestReadImage(t *testing.T) {
	env := newEnv(t)
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(env.Cwd, "dot.PNG")
	writeTestFile(t, path, buf.String())
	res := call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": path})
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result = %+v", res)
	}
	want := llm.Block{Type: llm.BlockImage, MediaType: "image/png", Data: base64.StdEncoding.EncodeToString(buf.Bytes())}
	if diff := cmp.Diff(want, res.Content[1]); diff != "" {
		t.Errorf("image block (-want +got):\n%s", diff)
	}
	res = call(t, NewRead(ReadConfig{MaxImageBytes: 10}), env, map[string]any{"file_path": path})
	wantContains(t, outcomeOf(res), true, "more than the 10 bytes")
}

func TestReadNotebook(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "nb.ipynb")
	writeTestFile(t, path, sampleNotebook)
	got := call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": path}).TextOf()
	want := "Notebook " + path + `: 3 cells

<cell id="c1" type="code">
import math
print(math.pi)
</cell>
<outputs id="c1">
3.14159
</outputs>

<cell id="m1" type="markdown">
# Title <b>
</cell>

<cell id="c2" type="code">
x = 1
</cell>
<outputs id="c2">
2
[image/png output not shown]
NameError: y
</outputs>
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := env.Files.Get(path); !ok {
		t.Errorf("notebook read not recorded")
	}
	// A broken notebook still reads as text.
	writeTestFile(t, path, "{not json\n")
	wantContains(t, outcomeOf(call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": path})), false, "     1\t{not json")
}

func TestReadDef(t *testing.T) {
	r := NewRead(ReadConfig{})
	if r.Def().Name != "Read" || !r.Traits(nil).ReadOnly || !r.Traits(nil).ConcurrencySafe {
		t.Errorf("Def/Traits = %v %v", r.Def().Name, r.Traits(nil))
	}
	if string(r.Def().InputSchema) != string(NewRead(ReadConfig{}).Def().InputSchema) {
		t.Errorf("schema bytes not stable")
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"main.go", "main.go", 0}, {"main.go", "mian.go", 2}, {"config.yml", "config.yaml", 1},
		{"a", "abcdef", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, 2); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
