// Package testbin builds the cohort binaries for the tests that run them as
// processes (the CLI's binary tests, the Agent SDK suite, the workflow
// host's tests): cmd/cohort with cmd/cohort-workflow beside it, as
// `go install ./cmd/...` puts them, once per test binary, with -race when
// the tests run with it, removed by Cleanup.
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
	mu    sync.Mutex
	dir   string
	built = map[string]bool{} // programs built into dir
)

// build builds the programs under cmd/ that are not built yet into dir.
func build(t testing.TB, race bool, progs ...string) string {
	return buildTags(t, race, "", progs...)
}

// buildTags is build with go build -tags tags (one set of tags per test
// binary: the first call's).
func buildTags(t testing.TB, race bool, tags string, progs ...string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if dir == "" {
		d, err := os.MkdirTemp("", "cohort-bin-")
		if err != nil {
			t.Fatalf("build cohort: %v", err)
		}
		dir = d
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if race {
		args = append(args, "-race")
	}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	var todo []string
	for _, p := range progs {
		if !built[p] {
			todo = append(todo, "./cmd/"+p)
		}
	}
	if len(todo) == 0 {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", append(args, todo...)...)
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %v: %v\n%s", todo, err, out)
	}
	for _, p := range progs {
		built[p] = true
	}
	return dir
}

// Cohort builds cmd/cohort (once) and returns its path; race adds -race,
// so that the build reuses the packages a race-enabled test run compiled.
// The workflow host is built beside it, where cohort looks for it first.
func Cohort(t testing.TB, race bool) string {
	return filepath.Join(build(t, race, "cohort", "cohort-workflow"), "cohort")
}

// CohortTags is Cohort built with go build -tags tags, for a test binary
// built with the same tags (the fault-injection builds of package
// permission).
func CohortTags(t testing.TB, race bool, tags string) string {
	return filepath.Join(buildTags(t, race, tags, "cohort", "cohort-workflow"), "cohort")
}

// Workflow builds cmd/cohort-workflow (once) and returns its path.
func Workflow(t testing.TB, race bool) string {
	return filepath.Join(build(t, race, "cohort-workflow"), "cohort-workflow")
}

// Cleanup removes the binaries, if any were built; call it from TestMain.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
	}
}
