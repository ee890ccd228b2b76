package file

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// responseJSON is what a hook reads as tool_response: the Response
// marshalled and decoded generically.
func responseJSON(t *testing.T, r any) map[string]any {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("the response is not a JSON object: %s", data)
	}
	return m
}

func TestWriteResponse(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "a.txt")
	res := call(t, NewWrite(), env, map[string]any{"file_path": path, "content": "one\ntwo\n"})
	want := map[string]any{"type": "create", "filePath": path, "content": "one\ntwo\n",
		"structuredPatch": []any{}, "originalFile": nil}
	if diff := cmp.Diff(want, responseJSON(t, res.Response)); diff != "" {
		t.Errorf("create (-want +got):\n%s", diff)
	}
	res = call(t, NewWrite(), env, map[string]any{"file_path": path, "content": "one\n2\n"})
	want = map[string]any{"type": "update", "filePath": path, "content": "one\n2\n", "originalFile": "one\ntwo\n",
		"structuredPatch": []any{map[string]any{"oldStart": 1.0, "oldLines": 2.0, "newStart": 1.0, "newLines": 2.0,
			"lines": []any{" one", "-two", "+2"}}}}
	if diff := cmp.Diff(want, responseJSON(t, res.Response)); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}
}

func TestEditResponse(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "a.go")
	writeTestFile(t, path, "package a\n\nfunc f() {}\n")
	markRead(t, env, path)
	res := call(t, NewEdit(), env, map[string]any{"file_path": path, "old_string": "f()", "new_string": "g()"})
	want := map[string]any{"filePath": path, "oldString": "f()", "newString": "g()",
		"originalFile": "package a\n\nfunc f() {}\n", "userModified": false, "replaceAll": false,
		"structuredPatch": []any{map[string]any{"oldStart": 1.0, "oldLines": 3.0, "newStart": 1.0, "newLines": 3.0,
			"lines": []any{" package a", " ", "-func f() {}", "+func g() {}"}}}}
	if diff := cmp.Diff(want, responseJSON(t, res.Response)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadResponse(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "a.txt")
	writeTestFile(t, path, "l1\nl2\nl3\nl4\nl5")
	res := call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": path, "offset": 2, "limit": 2})
	want := map[string]any{"type": "text", "file": map[string]any{"filePath": path, "content": "l2\nl3",
		"numLines": 2.0, "startLine": 2.0, "totalLines": 5.0}}
	if diff := cmp.Diff(want, responseJSON(t, res.Response)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	res = call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": path})
	if got := responseJSON(t, res.Response)["file"].(map[string]any); got["totalLines"] != 5.0 || got["numLines"] != 5.0 {
		t.Errorf("whole file: %v", got)
	}
}

func TestMultiEdit(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "a.txt")
	writeTestFile(t, path, "alpha beta\ngamma beta\n")
	markRead(t, env, path)
	res := call(t, NewMultiEdit(), env, map[string]any{"file_path": path, "edits": []any{
		map[string]any{"old_string": "alpha", "new_string": "ALPHA"},
		map[string]any{"old_string": "beta", "new_string": "BETA", "replace_all": true},
		map[string]any{"old_string": "ALPHA BETA", "new_string": "first"},
	}})
	wantContains(t, outcomeOf(res), false, "Applied 3 edits", "4 occurrences replaced")
	if got := readTestFile(t, path); got != "first\ngamma BETA\n" {
		t.Fatalf("file = %q", got)
	}
	resp := responseJSON(t, res.Response)
	if resp["originalFileContents"] != "alpha beta\ngamma beta\n" || len(resp["edits"].([]any)) != 3 || len(resp["structuredPatch"].([]any)) != 1 {
		t.Errorf("response = %v", resp)
	}
}

// TestMultiEditAllOrNothing: an edit that fails leaves the file as it was,
// even when the edits before it succeeded.
func TestMultiEditAllOrNothing(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "a.txt")
	writeTestFile(t, path, "one two\n")
	markRead(t, env, path)
	tests := []struct {
		edits []any
		says  string
	}{
		{[]any{map[string]any{"old_string": "one", "new_string": "1"}, map[string]any{"old_string": "three", "new_string": "3"}},
			"edit 2 of 2: old_string was not found"},
		{[]any{map[string]any{"old_string": "one", "new_string": "one"}}, "edit 1: old_string and new_string are identical"},
		{[]any{map[string]any{"old_string": "o", "new_string": "0"}}, "edit 1 of 1: old_string occurs 2 times"},
	}
	for _, tt := range tests {
		res := call(t, NewMultiEdit(), env, map[string]any{"file_path": path, "edits": tt.edits})
		wantContains(t, outcomeOf(res), true, tt.says, "no edit was applied")
		if got := readTestFile(t, path); got != "one two\n" {
			t.Fatalf("the file changed after a failed edit: %q", got)
		}
	}
	res := call(t, NewMultiEdit(), env, map[string]any{"file_path": filepath.Join(env.Cwd, "new.txt"),
		"edits": []any{map[string]any{"old_string": "", "new_string": "fresh\n"}, map[string]any{"old_string": "fresh", "new_string": "new"}}})
	wantContains(t, outcomeOf(res), false, "Applied 2 edits")
	if got := readTestFile(t, filepath.Join(env.Cwd, "new.txt")); !strings.HasPrefix(got, "new") {
		t.Fatalf("created file = %q", got)
	}
}
