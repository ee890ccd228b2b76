package ownread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// GitState and Whole read a regular file whole and refuse, before reading
// any of it, a FIFO, a link into /proc and a file over the bound; a
// missing file is fs.ErrNotExist, as os.ReadFile gives.
func TestGitStateAndWholeRefuseWhatIsNotAPlainFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "index")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	env := filepath.Join(dir, "HEAD")
	if err := os.Symlink("/proc/self/environ", env); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "main")
	if err := os.WriteFile(ref, []byte("abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(string, int64) ([]byte, error){"GitState": GitState, "Whole": Whole} {
		var refused *Refused
		for _, p := range []string{fifo, env} {
			if data, err := read(p, MaxGitRef); !errors.As(err, &refused) || len(data) != 0 {
				t.Errorf("%s(%s) = %d bytes, %v; want it refused", name, p, len(data), err)
			}
		}
		if data, err := read(ref, 3); !errors.As(err, &refused) || len(data) != 0 {
			t.Errorf("%s over its bound = %q, %v; want it refused", name, data, err)
		}
		if data, err := read(ref, 4); err != nil || string(data) != "abc\n" {
			t.Errorf("%s at its bound = %q, %v", name, data, err)
		}
		if _, err := read(filepath.Join(dir, "none"), 4); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of a missing file: %v, want fs.ErrNotExist", name, err)
		}
	}
}
