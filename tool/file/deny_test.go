package file

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// access is a tool.Access for tests: writes inside roots, protected
// paths by a substring, reads denied under a directory.
type access struct {
	roots     []string
	protected string
	denied    string
}

func (a access) DeniedRead(cwd, path string) bool {
	return a.denied != "" && strings.HasPrefix(path, a.denied+"/")
}
func (a access) WriteRoots(string) []string { return a.roots }
func (a access) Protected(path string) bool {
	return a.protected != "" && strings.Contains(path, a.protected)
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
	env.Access = access{roots: []string{env.Cwd}, denied: filepath.Join(env.Cwd, "secrets")}
	// A link to the secret is judged by what it opens.
	if err := os.Symlink(secret, filepath.Join(env.Cwd, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool  tool.Tool
		input map[string]any
	}{
		{NewRead(ReadConfig{}), map[string]any{"file_path": secret}},
		{NewRead(ReadConfig{}), map[string]any{"file_path": filepath.Join(env.Cwd, "innocent.txt")}},
		{NewEdit(), map[string]any{"file_path": secret, "old_string": "s3cret", "new_string": "x"}},
		{NewMultiEdit(), map[string]any{"file_path": secret, "edits": []map[string]any{{"old_string": "s3cret", "new_string": "x"}}}},
		{NewWrite(), map[string]any{"file_path": secret, "content": "x"}},
		{NewNotebookEdit(NotebookEditConfig{}), map[string]any{"notebook_path": notebook, "new_source": "x", "edit_mode": "insert"}},
	} {
		res := call(t, c.tool, env, c.input)
		if !res.IsError || !strings.Contains(res.TextOf(), "Read deny rule") || strings.Contains(res.TextOf(), "s3cret") {
			t.Errorf("%s %v: %q", c.tool.Def().Name, c.input, res.TextOf())
		}
	}
	if got := readTestFile(t, secret); got != "s3cret\n" {
		t.Errorf("the denied file changed: %q", got)
	}
	// A process's own files are never opened, whatever the rules.
	res := call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": "/proc/self/environ"})
	if !res.IsError || !strings.Contains(res.TextOf(), "running process") {
		t.Errorf("Read /proc/self/environ: %q", res.TextOf())
	}
}

// TestWritesStayInTheirRoots is issue 36's invariant 6 below the
// permission check: whatever the mode decided, Write and Edit write only
// inside the agent's write roots and off protected paths, unless the
// call itself was approved (a person, or a rule naming the path); links
// lead nowhere else.
func TestWritesStayInTheirRoots(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	proj, out := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{proj, out, filepath.Join(proj, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(proj, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(out, "out-dir")
	link(filepath.Join(out, "new.txt"), "out-file")
	link(filepath.Join(proj, ".git", "hooks", "pre-commit"), "hook-link")
	env := &tool.Env{Caller: tool.Caller{Cwd: proj}, Files: tool.NewFileCache(),
		Access: access{roots: []string{proj}, protected: "/.git/"}}
	refused := []string{
		filepath.Join(out, "direct.txt"),
		filepath.Join(proj, "out-dir", "through-dir.txt"),
		filepath.Join(proj, "out-dir", "made", "deep.txt"),
		filepath.Join(proj, "out-file"),
		filepath.Join(proj, ".git", "hooks", "pre-commit"),
		filepath.Join(proj, "hook-link"),
		proj + "/../outside/dotdot.txt",
	}
	for _, p := range refused {
		res := call(t, NewWrite(), env, map[string]any{"file_path": p, "content": "pwned\n"})
		if !res.IsError {
			t.Errorf("Write %s: %q, want refused", p, res.TextOf())
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("files appeared outside: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(proj, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was written")
	}
	if res := call(t, NewWrite(), env, map[string]any{"file_path": filepath.Join(proj, "src", "ok.go"), "content": "package ok\n"}); res.IsError {
		t.Errorf("a write inside the root failed: %s", res.TextOf())
	}
	approved := *env
	approved.Approved = true
	for _, p := range []string{filepath.Join(out, "approved.txt"), filepath.Join(proj, ".git", "hooks", "pre-commit")} {
		if res := call(t, NewWrite(), &approved, map[string]any{"file_path": p, "content": "ok\n"}); res.IsError {
			t.Errorf("an approved write of %s failed: %s", p, res.TextOf())
		}
	}
}

// TestWriteRacesAFlippingLink is issue 36's escape 9: an allowed
// background command flips a directory of the project into a link to
// another place between the check of a Write's path and the write. With
// the path judged first and os.WriteFile after, some writes landed
// outside; opened through the root, none can, however the flips fall.
func TestWriteRacesAFlippingLink(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	proj, out := filepath.Join(base, "proj"), filepath.Join(base, "outside")
	for _, d := range []string{proj, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := &tool.Env{Caller: tool.Caller{Cwd: proj}, Files: tool.NewFileCache(), Access: access{roots: []string{proj}}}
	sub := filepath.Join(proj, "sub")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(sub)
			os.Mkdir(sub, 0o755)
			os.RemoveAll(sub)
			os.Symlink(out, sub)
		}
	}()
	w := NewWrite()
	for i := range 300 {
		call(t, w, env, map[string]any{"file_path": filepath.Join(sub, "f"+string(rune('a'+i%26))+".txt"), "content": "x"})
	}
	close(stop)
	wg.Wait()
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("%d writes landed outside the project through the flipping link", len(entries))
	}
}
