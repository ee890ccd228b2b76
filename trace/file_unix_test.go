//go:build unix

package trace

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestCreateRefusesFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	w, err := Create(path, Config{}) // must not block waiting for a reader
	if err == nil {
		w.Close()
		t.Fatal("Create accepted a FIFO")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the path", err)
	}
}
