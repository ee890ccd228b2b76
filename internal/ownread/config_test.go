package ownread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO planted under a configuration name is refused at once, where a
// plain read would block until a writer came.
func TestConfigRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".mcp.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	_, err := Config(fifo, 0)
	var refused *Refused
	if !errors.As(err, &refused) || refused.Path != fifo {
		t.Fatalf("Config(FIFO) = %v, want a *Refused naming %s", err, fifo)
	}

	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.json")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		if data, err := Config(p, 0); err != nil || string(data) != `{"a":1}` {
			t.Errorf("Config(%s) = %q, %v; want the file's content", p, data, err)
		}
	}
	if data, err := Config(file, 3); err != nil || string(data) != `{"a` {
		t.Errorf("Config with a limit of 3 = %q, %v", data, err)
	}
	if _, err := Config(filepath.Join(dir, "missing.json"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := Config(dir, 0); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("a directory: %v, want EISDIR", err)
	}
	if _, err := Config(filepath.Join(file, "x"), 0); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("below a file: %v, want ENOTDIR", err)
	}
}
