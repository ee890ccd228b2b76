package file

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// denyDir is a read policy denying everything under one directory.
type denyDir string

func (d denyDir) DeniedRead(cwd, path string) bool {
	return strings.HasPrefix(path, string(d)+"/")
}

// TestFileToolsRefuseDeniedPaths: below the permission check, every file
// tool refuses a path a Read deny rule covers before it opens anything,
// so the file's content cannot reach the model in a snippet or an
// original even when the check above let the call through.
func TestFileToolsRefuseDeniedPaths(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	secret := filepath.Join(env.Cwd, "secrets", "key")
	notebook := filepath.Join(env.Cwd, "secrets", "n.ipynb")
	writeTestFile(t, secret, "s3cret\n")
	writeTestFile(t, notebook, `{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
	env.Reads = denyDir(filepath.Join(env.Cwd, "secrets"))
	for _, c := range []struct {
		tool  tool.Tool
		input map[string]any
	}{
		{NewRead(ReadConfig{}), map[string]any{"file_path": secret}},
		{NewEdit(), map[string]any{"file_path": secret, "old_string": "s3cret", "new_string": "x"}},
		{NewMultiEdit(), map[string]any{"file_path": secret, "edits": []map[string]any{{"old_string": "s3cret", "new_string": "x"}}}},
		{NewWrite(), map[string]any{"file_path": secret, "content": "x"}},
		{NewNotebookEdit(NotebookEditConfig{}), map[string]any{"notebook_path": notebook, "new_source": "x", "edit_mode": "insert"}},
	} {
		res := call(t, c.tool, env, c.input)
		if !res.IsError || !strings.Contains(res.TextOf(), "Read deny rule") || strings.Contains(res.TextOf(), "s3cret") {
			t.Errorf("%s of a denied file: %q", c.tool.Def().Name, res.TextOf())
		}
	}
	if got := readTestFile(t, secret); got != "s3cret\n" {
		t.Errorf("the denied file changed: %q", got)
	}
}
