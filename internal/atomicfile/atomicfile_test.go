package atomicfile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil || string(data) != "new" {
		t.Fatalf("read back %q, %v", data, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(TempPattern(p)); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestConcurrentWritersNeverTearTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "status.json")
	contents := []string{"aaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccc"}
	var wg sync.WaitGroup
	for _, c := range contents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := Write(p, []byte(c), 0o600); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			data, err := os.ReadFile(p)
			if err != nil {
				continue // not written yet
			}
			ok := false
			for _, c := range contents {
				ok = ok || string(data) == c
			}
			if !ok {
				t.Errorf("a reader saw a torn file: %q", data)
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	readers.Wait()
	if left, _ := filepath.Glob(TempPattern(p)); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestWriteIntoAMissingDirectoryFailsCleanly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gone", "x.json")
	if err := Write(p, []byte("x"), 0o600); err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
}
