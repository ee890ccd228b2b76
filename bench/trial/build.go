package trial

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the programs a trial runs, built into a temp directory.
type Binaries struct {
	Cohort    string
	FakeServe string
	// MinClient is bench/cmd/minclient: the same work as cohort with
	// nothing else, the floor a workload's wall time is read against.
	MinClient string
	dir       string
}

// Build compiles cmd/cohort, bench/cmd/fakeserve and bench/cmd/minclient of the module that
// holds the current directory into a new temp directory, with the default
// (release) build flags. The caller must Remove them.
func Build(ctx context.Context) (*Binaries, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("run the benchmarks from inside the cohort module (go env GOMOD found none)")
	}
	root := filepath.Dir(gomod)
	dir, err := os.MkdirTemp("", "cohort-bench-bin-")
	if err != nil {
		return nil, err
	}
	b := &Binaries{Cohort: filepath.Join(dir, "cohort"), FakeServe: filepath.Join(dir, "fakeserve"),
		MinClient: filepath.Join(dir, "minclient"), dir: dir}
	for _, t := range []struct{ out, pkg string }{{b.Cohort, "./cmd/cohort"}, {b.FakeServe, "./bench/cmd/fakeserve"},
		{b.MinClient, "./bench/cmd/minclient"}} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", t.out, t.pkg)
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Remove()
			return nil, fmt.Errorf("go build %s: %w\n%s", t.pkg, err, msg)
		}
	}
	return b, nil
}

// DropFromPageCache writes the files' cached pages back and drops them
// from the page cache, so that a run reads the binary as it would an
// installed one. A freshly linked binary's pages can be cached in larger
// pieces than a read brings in, and the kernel maps a whole cached piece
// into a process that faults on any page of it, so the same binary can
// show megabytes more resident memory until it is dropped (how much
// varies from build to build).
func DropFromPageCache(paths ...string) error {
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = f.Sync()
		if err == nil {
			err = dropPages(f)
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("dropping %s from the page cache: %w", p, err)
		}
	}
	return nil
}

// Remove deletes the binaries.
func (b *Binaries) Remove() {
	if b != nil && b.dir != "" {
		os.RemoveAll(b.dir)
	}
}
