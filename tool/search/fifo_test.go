package search

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/fifotest"
	"github.com/cohort-dev/cohort/tool"
)

// A command in the sandbox can make a FIFO anywhere in the project, under
// any name, an ignore file's too: Grep's Go backend skips it (as rg does)
// instead of waiting on it for a writer, and a link to /proc/self/environ
// (Cohort's environment, its API key among it) is not searched, whether
// met in the walk or given as the path. Before, the first call hung.
func TestGoGrepSkipsFIFOsAndTheKernelsFiles(t *testing.T) {
	root := fixture(t)
	var fifos []string
	for _, name := range []string{"pipe.go", ".gitignore", "sub/.ignore"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		fifos = append(fifos, p)
	}
	env := filepath.Join(root, "env.txt")
	if err := os.Symlink("/proc/self/environ", env); err != nil {
		t.Fatal(err)
	}
	g := NewGrep(GrepConfig{Backend: BackendGo})
	e := &tool.Env{Caller: tool.Caller{Cwd: root}}
	for _, in := range []map[string]any{
		{"pattern": "foo", "output_mode": "content"},
		{"pattern": "PATH=", "output_mode": "content"},
		{"pattern": "PATH=", "path": env, "output_mode": "content"},
		{"pattern": "foo", "path": fifos[0]},
	} {
		var out string
		fifotest.Within(t, 20*time.Second, fifos, func() { out, _ = grep(t, g, e, in) })
		if strings.Contains(out, "PATH=") || strings.Contains(out, "pipe.go") {
			t.Errorf("%v: %q; want neither the environment nor the FIFO", in, out)
		}
		if in["pattern"] == "foo" && in["path"] == nil && !strings.Contains(out, "foo") {
			t.Errorf("%v: %q; want the project's own matches", in, out)
		}
	}
}

// rg waits on a FIFO under an ignore file's name until the search's
// deadline. The first such search says why it stopped; later ones use
// the Go backend, which skips the FIFO, instead of waiting out the
// deadline again.
func TestRipgrepStallFallsBackOnce(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("no rg on PATH")
	}
	root := fixture(t)
	fifo := filepath.Join(root, "sub", ".ignore")
	fifotest.Make(t, fifo)
	const timeout = 4 * time.Second // the Go backend's search fits well within it, under -race too
	g := NewGrep(GrepConfig{Timeout: timeout})
	e := &tool.Env{Caller: tool.Caller{Cwd: root}}
	in := map[string]any{"pattern": "foo", "output_mode": "content"}
	var first, second string
	var firstErr, secondErr bool
	fifotest.Within(t, 20*time.Second, []string{fifo}, func() {
		first, firstErr = grep(t, g, e, in)
		start := time.Now()
		second, secondErr = grep(t, g, e, in)
		if d := time.Since(start); d >= timeout {
			t.Errorf("the second search took %v: it waited on the FIFO again", d)
		}
	})
	if !firstErr || !strings.Contains(first, "FIFO") {
		t.Errorf("first search: %q (error %v); want it stopped, saying why", first, firstErr)
	}
	if secondErr || !strings.Contains(second, "foo") {
		t.Errorf("second search: %q (error %v); want the project's matches", second, secondErr)
	}
}
