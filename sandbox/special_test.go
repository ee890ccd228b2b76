//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A FIFO in the user's tree blocks whoever opens it later: git run by
// Cohort on a FIFO named .gitignore or a nested .git/HEAD waited until
// its deadline, and the user's next session with it (internal/redteam's
// o12-gitignore-fifo). No command makes one in a writable directory but
// its private TMPDIR, where tools keep theirs (GNU make's jobserver);
// what builds and repositories need still works in the project.
func TestNoSpecialFilesOutsideTMPDIR(t *testing.T) {
	plant := `python3 -c '
import os, sys
for p in sys.argv[1:]:
    try: os.mkfifo(p); print(p, "MADE")
    except OSError as x: print(p, x)' `
	for _, off := range []bool{false, true} {
		root, _ := filepath.EvalSymlinks(t.TempDir())
		cache := filepath.Join(root, "cache")
		cfg := Config{CacheDir: cache}
		if off {
			cfg.Without = []string{"fifos"}
		}
		e := newEnv(t, cfg)
		gitInit(t, e.project)
		if err := os.MkdirAll(filepath.Join(e.project, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		shm := "/dev/shm/fifo-" + filepath.Base(filepath.Dir(root))
		tree := []string{filepath.Join(e.project, "sub", ".gitignore"), filepath.Join(e.project, "sub", "HEAD"), filepath.Join(cache, "f"), shm}
		out, _ := e.bash(e.project, plant+strings.Join(tree, " ")+` "$TMPDIR/jobserver"`)
		os.Remove(shm)
		t.Logf("refusal off %v:\n%s", off, out)
		for _, p := range tree {
			made := strings.Contains(out, p+" MADE")
			switch {
			case !off && made:
				t.Errorf("a command made a FIFO at %s; only its TMPDIR takes one", p)
			case off && !made:
				t.Errorf("control: with the refusal left out, %s should take a FIFO", p)
			}
		}
		if !strings.Contains(out, "/jobserver MADE") {
			t.Errorf("refusal off %v: the private TMPDIR should take a FIFO (GNU make's jobserver makes one there)", off)
		}
	}
	// What a project needs from commands still works there: a git
	// repository of its own (the checkout's is read-only), a Python venv (go build and npm were tried by hand through the CLI).
	root, _ := filepath.EvalSymlinks(t.TempDir())
	e := newEnv(t, Config{CacheDir: filepath.Join(root, "cache")})
	gitInit(t, e.project)
	for _, d := range []string{".claude", ".cohort"} { // the top takes new directories
		if err := os.Mkdir(filepath.Join(e.project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, code := e.bash(e.project, `set -e
git init -q -b main r && cd r && echo x > f && git add f && git commit -qm one && git checkout -qb topic && git gc -q && cd ..
python3 -m venv --without-pip venv && venv/bin/python -c 'print("venv ok")'`)
	if code != 0 || !strings.Contains(out, "venv ok") {
		t.Errorf("git and a venv in the project (exit %d):\n%s", code, out)
	}
}
