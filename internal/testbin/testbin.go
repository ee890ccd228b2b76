// Package testbin builds the cohort binary for the tests that run it as a
// process (the CLI's binary tests, the Agent SDK suite): once per test
// binary, with -race when the tests run with it, removed by Cleanup.
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
)

// Cohort builds cmd/cohort (once) and returns its path; race adds -race,
// so that the build reuses the packages a race-enabled test run compiled.
func Cohort(t testing.TB, race bool) string {
	t.Helper()
	once.Do(func() {
		if dir, err = os.MkdirTemp("", "cohort-bin-"); err != nil {
			return
		}
		bin = filepath.Join(dir, "cohort")
		args := []string{"build", "-o", bin}
		if race {
			args = append(args, "-race")
		}
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", append(args, "./cmd/cohort")...)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		out, err = cmd.CombinedOutput()
	})
	if err != nil {
		t.Fatalf("build cohort: %v\n%s", err, out)
	}
	return bin
}

// Cleanup removes the binary, if one was built; call it from TestMain.
func Cleanup() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
