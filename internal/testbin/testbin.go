// Package testbin builds the cohort binaries for the tests that run them as
// processes (the CLI's end-to-end tests, the Agent SDK suite, the workflow
// host's tests): cmd/cohort with cmd/cohort-workflow beside it, as
// `go install ./cmd/...` puts them, with -race when the tests run with it.
//
// The binaries are built into a directory of the user's cache named after
// the checkout and the race flag, which every test binary of that checkout
// shares, under a file lock. go build does not relink a target that is up
// to date, so the first package of a `go test ./...` links them (about
// ten seconds each with -race on two cores) and every other package, and
// the next run, only checks them (under a second). A binary that a test is
// running is never rewritten in place: go build replaces the file, so a
// process started from the old one runs on. Where the cache cannot be
// used (no home directory), each test binary builds into a temporary
// directory of its own, as before, left for the system to clean.
package testbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
)

// buildTimeout bounds one build, the wait for the lock included: another
// test binary may be linking the same programs.
const buildTimeout = 10 * time.Minute

var (
	mu    sync.Mutex
	dirs  = map[flavour]string{}          // where the programs are
	built = map[flavour]map[string]bool{} // programs built this process
)

// flavour is how the programs are built: with -race or not, and the build
// tags (a fault-injection build must never stand in for a plain one).
type flavour struct {
	race bool
	tags string
}

// String names the flavour's directory: plain or race, then the tags.
func (f flavour) String() string {
	name := "plain"
	if f.race {
		name = "race"
	}
	if f.tags != "" {
		name += "-" + strings.NewReplacer(",", "-", " ", "-").Replace(f.tags)
	}
	return name
}

// moduleRoot is the checkout's directory (two levels above this file).
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// binDir returns the directory the programs are built into, making it.
func binDir(t testing.TB, race bool, tags string) string {
	fl := flavour{race, tags}
	if d := dirs[fl]; d != "" {
		return d
	}
	var d string
	if cache, err := os.UserCacheDir(); err == nil {
		sum := sha256.Sum256([]byte(moduleRoot()))
		d = filepath.Join(cache, "cohort", "testbin", hex.EncodeToString(sum[:8]), fl.String())
		if os.MkdirAll(d, 0o700) != nil {
			d = ""
		}
	}
	if d == "" {
		tmp, err := os.MkdirTemp("", "cohort-bin-")
		if err != nil {
			t.Fatalf("build cohort: %v", err)
		}
		d = tmp
	}
	dirs[fl] = d
	built[fl] = map[string]bool{}
	return d
}

// build brings the programs under cmd/ that this process has not built yet
// up to date in the build directory and returns the directory.
func build(t testing.TB, race bool, progs ...string) string {
	return buildTags(t, race, "", progs...)
}

// buildTags is build with go build -tags tags, into a directory of its
// own.
func buildTags(t testing.TB, race bool, tags string, progs ...string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	dir := binDir(t, race, tags)
	var todo []string
	for _, p := range progs {
		if !built[flavour{race, tags}][p] {
			todo = append(todo, "./cmd/"+p)
		}
	}
	if len(todo) == 0 {
		return dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	lk, err := filelock.Lock(ctx, filepath.Join(dir, ".lock"), filelock.Options{Create: true, MaxDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("build %v: %v", todo, err)
	}
	defer lk.Unlock()
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if race {
		args = append(args, "-race")
	}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, todo...)...)
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %v: %v\n%s", todo, err, out)
	}
	for _, p := range progs {
		built[flavour{race, tags}][p] = true
	}
	return dir
}

// Cohort builds cmd/cohort (once per test binary) and returns its path;
// race adds -race, so that the build reuses the packages a race-enabled
// test run compiled. The workflow host is built beside it, where cohort
// looks for it first.
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
