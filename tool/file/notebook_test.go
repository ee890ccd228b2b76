package file

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sampleNotebook = `{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "c1",
   "metadata": {"tags": ["keep"]},
   "outputs": [{"name": "stdout", "output_type": "stream", "text": ["3.14159\n"]}],
   "source": ["import math\n", "print(math.pi)"]
  },
  {
   "cell_type": "markdown",
   "id": "m1",
   "metadata": {},
   "source": "# Title <b>"
  },
  {
   "cell_type": "code",
   "execution_count": 4,
   "id": "c2",
   "metadata": {},
   "outputs": [
    {"data": {"text/plain": ["2"]}, "execution_count": 4, "metadata": {}, "output_type": "execute_result"},
    {"data": {"image/png": "iVBOR"}, "metadata": {}, "output_type": "display_data"},
    {"ename": "NameError", "evalue": "y", "output_type": "error", "traceback": []}
   ],
   "source": "x = 1"
  }
 ],
 "metadata": {"kernelspec": {"name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
`

// cellsOf summarises a notebook's cells as id/type/source/outputs.
func cellsOf(t *testing.T, data string) []map[string]any {
	t.Helper()
	var nb struct {
		Cells []map[string]any `json:"cells"`
	}
	if err := json.Unmarshal([]byte(data), &nb); err != nil {
		t.Fatalf("written notebook is not JSON: %v\n%s", err, data)
	}
	return nb.Cells
}

func TestNotebookEdit(t *testing.T) {
	tests := []struct {
		name  string
		input map[string]any
		want  string // result text
		check func(t *testing.T, cells []map[string]any)
	}{
		{"replace code cell clears outputs", map[string]any{"cell_id": "c1", "new_source": "a = 1\nb = 2\n"},
			"Replaced the source of cell c1", func(t *testing.T, cells []map[string]any) {
				want := map[string]any{"cell_type": "code", "execution_count": nil, "id": "c1",
					"metadata": map[string]any{"tags": []any{"keep"}}, "outputs": []any{}, "source": []any{"a = 1\n", "b = 2\n"}}
				if diff := cmp.Diff(want, cells[0]); diff != "" {
					t.Errorf("cell (-want +got):\n%s", diff)
				}
			}},
		{"replace converts type", map[string]any{"cell_id": "c2", "new_source": "text", "cell_type": "markdown"},
			"Replaced the source of cell c2", func(t *testing.T, cells []map[string]any) {
				want := map[string]any{"cell_type": "markdown", "id": "c2", "metadata": map[string]any{}, "source": []any{"text"}}
				if diff := cmp.Diff(want, cells[2]); diff != "" {
					t.Errorf("cell (-want +got):\n%s", diff)
				}
			}},
		{"replace by index", map[string]any{"cell_id": "cell-1", "new_source": "## New"},
			"Replaced the source of cell cell-1", func(t *testing.T, cells []map[string]any) {
				if cells[1]["id"] != "m1" || cells[1]["source"].([]any)[0] != "## New" {
					t.Errorf("cell 1 = %v", cells[1])
				}
			}},
		{"insert after", map[string]any{"cell_id": "c1", "new_source": "y = 2", "cell_type": "code", "edit_mode": "insert"},
			"Inserted code cell fixedid1 after cell c1", func(t *testing.T, cells []map[string]any) {
				want := map[string]any{"cell_type": "code", "execution_count": nil, "id": "fixedid1",
					"metadata": map[string]any{}, "outputs": []any{}, "source": []any{"y = 2"}}
				if len(cells) != 4 || cmp.Diff(want, cells[1]) != "" {
					t.Errorf("cells = %v", cells)
				}
			}},
		{"insert at top", map[string]any{"new_source": "# Top", "cell_type": "markdown", "edit_mode": "insert"},
			"Inserted markdown cell fixedid1 at the top", func(t *testing.T, cells []map[string]any) {
				if len(cells) != 4 || cells[0]["id"] != "fixedid1" || cells[0]["outputs"] != nil {
					t.Errorf("cells = %v", cells)
				}
			}},
		{"delete", map[string]any{"cell_id": "m1", "new_source": "", "edit_mode": "delete"},
			"Deleted cell m1", func(t *testing.T, cells []map[string]any) {
				if len(cells) != 2 || cells[1]["id"] != "c2" {
					t.Errorf("cells = %v", cells)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			path := filepath.Join(env.Cwd, "nb.ipynb")
			writeTestFile(t, path, sampleNotebook)
			markRead(t, env, path)
			ne := NewNotebookEdit(NotebookEditConfig{NewID: func() string { return "fixedid1" }})
			input := map[string]any{"notebook_path": path}
			for k, v := range tt.input {
				input[k] = v
			}
			got := outcomeOf(call(t, ne, env, input))
			if diff := cmp.Diff(outcome{tt.want + " in " + path + ".", false}, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			data := readTestFile(t, path)
			tt.check(t, cellsOf(t, data))
			if !strings.Contains(data, `"kernelspec"`) || !strings.Contains(data, `"nbformat_minor": 5`) {
				t.Errorf("top-level fields lost:\n%s", data)
			}
			// The agent's view is current: a second edit needs no new Read.
			again := call(t, ne, env, map[string]any{"notebook_path": path, "new_source": "z", "cell_type": "code", "edit_mode": "insert"})
			if again.IsError {
				t.Errorf("second edit: %s", again.TextOf())
			}
		})
	}
}

func TestNotebookEditFailures(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "nb.ipynb")
	writeTestFile(t, path, sampleNotebook)
	unread := filepath.Join(env.Cwd, "unread.ipynb")
	writeTestFile(t, unread, sampleNotebook)
	broken := filepath.Join(env.Cwd, "broken.ipynb")
	writeTestFile(t, broken, "{\n \"cells\": [\n  oops\n ]\n}\n")
	notes := filepath.Join(env.Cwd, "notes.txt")
	writeTestFile(t, notes, "x")
	for _, p := range []string{path, broken, notes} {
		markRead(t, env, p)
	}
	tests := []struct {
		name  string
		input map[string]any
		parts []string
	}{
		{"unknown cell", map[string]any{"notebook_path": path, "cell_id": "zz", "new_source": "x"},
			[]string{`no cell with id "zz"; cell ids are: "c1", "m1", "c2"`}},
		{"index out of range", map[string]any{"notebook_path": path, "cell_id": "cell-3", "new_source": "x"},
			[]string{`no cell with id "cell-3"`}},
		{"replace needs a cell", map[string]any{"notebook_path": path, "new_source": "x"},
			[]string{`cell_id is required for edit_mode "replace"`}},
		{"insert needs a type", map[string]any{"notebook_path": path, "new_source": "x", "edit_mode": "insert"},
			[]string{"cell_type (code or markdown) is required"}},
		{"not read", map[string]any{"notebook_path": unread, "cell_id": "c1", "new_source": "x"},
			[]string{"has not been read yet"}},
		{"broken json", map[string]any{"notebook_path": broken, "cell_id": "c1", "new_source": "x"},
			[]string{"not valid notebook JSON: line 3, column 3"}},
		{"not a notebook", map[string]any{"notebook_path": notes, "cell_id": "c1", "new_source": "x"},
			[]string{"is not a Jupyter notebook (.ipynb)"}},
		{"relative", map[string]any{"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x"},
			[]string{"notebook_path must be an absolute path"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcomeOf(call(t, NewNotebookEdit(NotebookEditConfig{}), env, tt.input))
			wantContains(t, got, true, tt.parts...)
		})
	}
	if readTestFile(t, path) != sampleNotebook {
		t.Errorf("a failed edit changed the notebook")
	}
}

func TestNotebookFormat(t *testing.T) {
	env := newEnv(t)
	path := filepath.Join(env.Cwd, "old.ipynb")
	writeTestFile(t, path, `{"nbformat":4,"nbformat_minor":4,"metadata":{},"cells":[{"cell_type":"markdown","metadata":{},"source":"a"}]}`)
	markRead(t, env, path)
	res := call(t, NewNotebookEdit(NotebookEditConfig{NewID: func() string { t.Error("id drawn for a notebook without ids"); return "" }}),
		env, map[string]any{"notebook_path": path, "cell_id": "cell-0", "new_source": "x < y & z\n", "cell_type": "code", "edit_mode": "insert"})
	if res.IsError || res.TextOf() != "Inserted code cell cell-1 after cell cell-0 in "+path+"." {
		t.Fatalf("result: %s", res.TextOf())
	}
	want := `{
 "cells": [
  {
   "cell_type": "markdown",
   "metadata": {},
   "source": "a"
  },
  {
   "cell_type": "code",
   "execution_count": null,
   "metadata": {},
   "outputs": [],
   "source": [
    "x < y & z\n"
   ]
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 4
}
`
	if diff := cmp.Diff(want, readTestFile(t, path)); diff != "" {
		t.Errorf("notebook bytes (-want +got):\n%s", diff)
	}
}
