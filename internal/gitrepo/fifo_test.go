package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/fifotest"
)

// A nested repository is the model's to make: its .git file, the
// commondir of the git dir it names and its alternates may be FIFOs, or
// links to /proc/self/environ. Reading its layout neither waits on one
// (before, Read hung on a .git FIFO) nor takes Cohort's environment for a
// path that an error message would then show.
func TestReadRefusesFIFOsAndTheKernelsFiles(t *testing.T) {
	top := t.TempDir()
	sub := filepath.Join(top, "sub")
	gd := filepath.Join(top, "gd")
	for _, d := range []string{sub, filepath.Join(gd, "objects", "info")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dotGit := filepath.Join(sub, ".git")
	if err := syscall.Mkfifo(dotGit, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	var fifos []string
	readWithin := func() (l Layout, err error) {
		t.Helper()
		fifotest.Within(t, 20*time.Second, fifos, func() { l, err = Read(sub) })
		return l, err
	}
	fifos = []string{dotGit}
	if _, err := readWithin(); err == nil || !strings.Contains(err.Error(), dotGit) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a .git FIFO: %v; want an error naming it as not a regular file", err)
	}

	os.Remove(dotGit)
	if err := os.Symlink("/proc/self/environ", dotGit); err != nil {
		t.Fatal(err)
	}
	if _, err := readWithin(); err == nil || strings.Contains(err.Error(), "PATH=") {
		t.Errorf("a .git link to /proc/self/environ: %v; want it refused, the environment not shown", err)
	}

	os.Remove(dotGit)
	if err := os.WriteFile(dotGit, []byte("gitdir: "+gd+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commondir := filepath.Join(gd, "commondir")
	alternates := filepath.Join(gd, "objects", "info", "alternates")
	for _, p := range []string{commondir, alternates} {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifos = []string{commondir, alternates}
	l, err := readWithin()
	if err == nil || !strings.Contains(err.Error(), commondir) {
		t.Errorf("a commondir FIFO: %+v, %v; want an error naming it", l, err)
	}
	os.Remove(commondir)
	l, err = readWithin()
	if err != nil || l.CommonDir == "" {
		t.Fatalf("without the commondir: %+v, %v", l, err)
	}
	var alt []string
	fifotest.Within(t, 20*time.Second, []string{alternates}, func() { alt = l.Alternates() })
	if len(alt) != 0 {
		t.Errorf("alternates a FIFO: %v; want none", alt)
	}
}
