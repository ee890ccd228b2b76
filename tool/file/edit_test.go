package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/tool"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name     string
		existing *string // nil: no file
		read     bool
		modify   bool
		content  string
		want     outcome
		wantFile string
	}{
		{name: "create", content: "a\nb\n", want: outcome{"Created FILE (2 lines, 4 bytes).", false}, wantFile: "a\nb\n"},
		{name: "create empty", content: "", want: outcome{"Created FILE (0 lines, 0 bytes).", false}, wantFile: ""},
		{name: "overwrite after read", existing: ptr("old\n"), read: true, content: "new",
			want: outcome{"Overwrote FILE (1 line, 3 bytes).", false}, wantFile: "new"},
		{name: "overwrite unread", existing: ptr("old\n"), content: "new",
			want: outcome{"FILE has not been read yet; Read it first, then change it", true}, wantFile: "old\n"},
		{name: "overwrite after outside change", existing: ptr("old\n"), read: true, modify: true, content: "new",
			want:     outcome{"FILE has changed since it was last read (by the user, a formatter or another agent); Read it again before changing it", true},
			wantFile: "changed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			path := filepath.Join(env.Cwd, "deep", "dir", "f.txt")
			if tt.existing != nil {
				writeTestFile(t, path, *tt.existing)
				if err := os.Chmod(path, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.read {
				markRead(t, env, path)
			}
			if tt.modify {
				touchLater(t, path, "changed\n")
			}
			got := outcomeOf(call(t, NewWrite(), env, map[string]any{"file_path": path, "content": tt.content}))
			got.Text = strings.ReplaceAll(got.Text, path, "FILE")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFile, readTestFile(t, path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if got.IsError {
				return
			}
			info, _ := os.Stat(path)
			if tt.existing != nil && info.Mode().Perm() != 0o600 {
				t.Errorf("permissions changed to %v", info.Mode().Perm())
			}
			if s, ok := env.Files.Get(path); !ok || !s.ModTime.Equal(info.ModTime()) || s.Size != info.Size() {
				t.Errorf("cache not updated: %+v", s)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestWriteRefusals(t *testing.T) {
	env := newEnv(t)
	secret := filepath.Join(env.Cwd, "secret")
	env.Guard = denyGuard{prefix: secret}
	res := outcomeOf(call(t, NewWrite(), env, map[string]any{"file_path": filepath.Join(secret, "x.txt"), "content": "x"}))
	wantContains(t, res, true, "is not allowed: outside the worktree")
	if _, err := os.Stat(secret); !os.IsNotExist(err) {
		t.Errorf("refused write created %s", secret)
	}

	// A symlink inside the allowed area that points into the refused one.
	if err := os.MkdirAll(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(env.Cwd, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	res = outcomeOf(call(t, NewWrite(), env, map[string]any{"file_path": filepath.Join(link, "y.txt"), "content": "y"}))
	wantContains(t, res, true, "which resolves to "+filepath.Join(secret, "y.txt"))

	res = outcomeOf(call(t, NewWrite(), env, map[string]any{"file_path": env.Cwd, "content": "x"}))
	wantContains(t, res, true, "is a directory")
	res = outcomeOf(call(t, NewWrite(), env, map[string]any{"file_path": "rel.txt", "content": "x"}))
	wantContains(t, res, true, "must be an absolute path")

	// Without a read-file cache, existing files cannot be overwritten.
	existing := filepath.Join(env.Cwd, "e.txt")
	writeTestFile(t, existing, "keep")
	res = outcomeOf(call(t, NewWrite(), &tool.Env{Caller: tool.Caller{Cwd: env.Cwd}}, map[string]any{"file_path": existing, "content": "x"}))
	wantContains(t, res, true, "cannot verify that")
	if readTestFile(t, existing) != "keep" {
		t.Errorf("file changed")
	}
}

func TestEdit(t *testing.T) {
	const src = "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		content  string
		input    map[string]any
		want     outcome
		wantFile string
	}{
		{name: "unique", content: src, input: map[string]any{"old_string": "func a() {\n\treturn 1", "new_string": "func a() {\n\treturn 2"},
			want: outcome{"Edited FILE: replaced 1 occurrence. The changed region now reads:\n" +
				"     1\tpackage main\n     2\t\n     3\tfunc a() {\n     4\t\treturn 2\n     5\t}\n     6\t\n     7\tfunc b() {\n     8\t\treturn 1", false},
			wantFile: strings.Replace(src, "return 1", "return 2", 1)},
		{name: "ambiguous", content: src, input: map[string]any{"old_string": "return 1", "new_string": "return 2"},
			want:     outcome{"old_string occurs 2 times in FILE. Include more surrounding lines to make it unique, or set replace_all to true to change every occurrence.", true},
			wantFile: src},
		{name: "replace all", content: src, input: map[string]any{"old_string": "return 1", "new_string": "return 0", "replace_all": true},
			want: outcome{"Edited FILE: replaced all 2 occurrences (the first is shown). The changed region now reads:\n" +
				"     1\tpackage main\n     2\t\n     3\tfunc a() {\n     4\t\treturn 0\n     5\t}\n     6\t\n     7\tfunc b() {\n     8\t\treturn 0", false},
			wantFile: strings.ReplaceAll(src, "return 1", "return 0")},
		{name: "replace all with one occurrence", content: "x y", input: map[string]any{"old_string": "y", "new_string": "z", "replace_all": true},
			want: outcome{"Edited FILE: replaced 1 occurrence. The changed region now reads:\n     1\tx z", false}, wantFile: "x z"},
		{name: "not found", content: src, input: map[string]any{"old_string": "return 3", "new_string": "x"},
			want:     outcome{"old_string was not found in FILE. It must match the file exactly, including whitespace and indentation; Read the file again if unsure.", true},
			wantFile: src},
		{name: "line number prefix hint", content: src, input: map[string]any{"old_string": "     4\treturn 1", "new_string": "x"},
			want: outcome{"old_string was not found in FILE. It must match the file exactly, including whitespace and indentation; Read the file again if unsure. " +
				"old_string seems to include line-number prefixes from Read output; leave them out.", true},
			wantFile: src},
		{name: "identical", content: src, input: map[string]any{"old_string": "a", "new_string": "a"},
			want: outcome{"old_string and new_string are identical; there is nothing to change", true}, wantFile: src},
		{name: "delete text", content: "keep\ndrop\nkeep\n", input: map[string]any{"old_string": "drop\n", "new_string": ""},
			want: outcome{"Edited FILE: replaced 1 occurrence. The changed region now reads:\n     1\tkeep\n     2\tkeep", false}, wantFile: "keep\nkeep\n"},
		{name: "crlf file keeps crlf", content: "one\r\ntwo\r\nthree\r\n", input: map[string]any{"old_string": "one\ntwo", "new_string": "1\n2\n2.5"},
			want:     outcome{"Edited FILE: replaced 1 occurrence. The changed region now reads:\n     1\t1\n     2\t2\n     3\t2.5\n     4\tthree", false},
			wantFile: "1\r\n2\r\n2.5\r\nthree\r\n"},
		{name: "crlf file with crlf input", content: "one\r\ntwo\r\n", input: map[string]any{"old_string": "one\r\ntwo", "new_string": "x\ny"},
			want: outcome{"Edited FILE: replaced 1 occurrence. The changed region now reads:\n     1\tx\n     2\ty", false}, wantFile: "x\r\ny\r\n"},
		{name: "mixed endings match exactly", content: "a\r\nb\nc\n", input: map[string]any{"old_string": "a\nb", "new_string": "x"},
			want:     outcome{"old_string was not found in FILE. It must match the file exactly, including whitespace and indentation; Read the file again if unsure.", true},
			wantFile: "a\r\nb\nc\n"},
		{name: "empty old on non-empty file", content: "x", input: map[string]any{"old_string": "", "new_string": "y"},
			want: outcome{"old_string is empty but FILE is not; give the text to replace, or use Write to replace the whole file", true}, wantFile: "x"},
		{name: "empty old fills empty file", content: "", input: map[string]any{"old_string": "", "new_string": "y\n"},
			want: outcome{"Edited FILE: replaced 1 occurrence. The changed region now reads:\n     1\ty", false}, wantFile: "y\n"},
		{name: "binary", content: "a\x00b", input: map[string]any{"old_string": "a", "new_string": "b"},
			want: outcome{"FILE is a binary file; Edit only changes text", true}, wantFile: "a\x00b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			path := filepath.Join(env.Cwd, "f.go")
			writeTestFile(t, path, tt.content)
			env.Files.Put(path, stateOf(t, path)) // read, as far as Edit can tell
			input := map[string]any{"file_path": path}
			for k, v := range tt.input {
				input[k] = v
			}
			got := outcomeOf(call(t, NewEdit(), env, input))
			got.Text = strings.ReplaceAll(got.Text, path, "FILE")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFile, readTestFile(t, path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if s, _ := env.Files.Get(path); !got.IsError && s != stateOf(t, path) {
				t.Errorf("cache not updated after the edit")
			}
		})
	}
}

func stateOf(t *testing.T, path string) tool.FileState {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return tool.FileState{ModTime: info.ModTime(), Size: info.Size()}
}

func TestEditReadFirst(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "f.txt")
	writeTestFile(t, path, "hello world\n")
	edit := func() outcome {
		return outcomeOf(call(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "world", "new_string": "there"}))
	}
	wantContains(t, edit(), true, "has not been read yet")
	markRead(t, env, path)
	touchLater(t, path, "hello world!\n")
	wantContains(t, edit(), true, "has changed since it was last read")
	markRead(t, env, path)
	wantContains(t, edit(), false, "replaced 1 occurrence")
	// Edits chain without a new Read: the tool records its own write.
	res := outcomeOf(call(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "there", "new_string": "again"}))
	wantContains(t, res, false, "hello again!")

	// A partial read is enough, as in Claude Code.
	long := filepath.Join(env.Cwd, "long.txt")
	writeTestFile(t, long, numbered(1, 50))
	call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": long, "offset": 10, "limit": 2})
	res = outcomeOf(call(t, NewEdit(), env, map[string]any{"file_path": long, "old_string": "line 40\n", "new_string": "line forty\n"}))
	wantContains(t, res, false, "    40\tline forty")
}

func TestEditCreate(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "new", "pkg", "a.go")
	res := outcomeOf(call(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "", "new_string": "package pkg\n"}))
	if diff := cmp.Diff(outcome{"Created " + path + " (1 line).", false}, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if readTestFile(t, path) != "package pkg\n" {
		t.Errorf("file not created")
	}
	res = outcomeOf(call(t, NewEdit(), env, map[string]any{"file_path": filepath.Join(env.Cwd, "missing.go"), "old_string": "x", "new_string": "y"}))
	wantContains(t, res, true, "File does not exist")

	env.Guard = denyGuard{prefix: filepath.Join(env.Cwd, "blocked")}
	blocked := filepath.Join(env.Cwd, "blocked", "b.go")
	res = outcomeOf(call(t, NewEdit(), env, map[string]any{"file_path": blocked, "old_string": "", "new_string": "x"}))
	wantContains(t, res, true, "not allowed")
	if _, err := os.Stat(blocked); !os.IsNotExist(err) {
		t.Errorf("guarded file was created")
	}
}

func TestSnippetBounds(t *testing.T) {
	content := numbered(1, 20)
	start := strings.Index(content, "line 10")
	got := snippet(content, start, start+len("line 10\n"))
	want := "     6\tline 6\n     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tline 10\n    11\tline 11\n    12\tline 12\n    13\tline 13\n    14\tline 14"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := snippet("", 0, 0); got != "(the file is now empty)" {
		t.Errorf("empty: %q", got)
	}
}

func TestTraits(t *testing.T) {
	for _, tl := range []tool.Tool{NewWrite(), NewEdit(), NewNotebookEdit(NotebookEditConfig{})} {
		if tr := tl.Traits(nil); tr.ReadOnly || tr.ConcurrencySafe {
			t.Errorf("%s traits = %+v, want neither", tl.Def().Name, tr)
		}
	}
}
