package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCreateRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, dest := range map[string]string{"to a file": target, "dangling": filepath.Join(dir, "missing")} {
		link := filepath.Join(dir, "link-"+strings.ReplaceAll(name, " ", "-"))
		if err := os.Symlink(dest, link); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		w, err := Create(link, Config{})
		if err == nil {
			w.Close()
			t.Fatalf("%s: Create followed a symbolic link", name)
		}
		if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), link) {
			t.Errorf("%s: error %q does not say the path is a link", name, err)
		}
	}
	if data, _ := os.ReadFile(target); string(data) != "keep me" {
		t.Errorf("the link's target was changed: %q", data)
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling link's target was created")
	}
}

func TestCreateModeAndTruncate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte("old "), 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	sum := validateFile(t, path)
	if sum.Events != 1 || sum.Process != "cohort" {
		t.Errorf("an empty run's trace: %+v", sum)
	}
	fresh := filepath.Join(t.TempDir(), "new.json")
	w, err = Create(fresh, Config{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file: %v %v, want mode 0600", fi.Mode(), err)
	}
}

func TestCreateRefusesDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if w, err := Create(dir, Config{}); err == nil {
		w.Close()
		t.Fatal("Create accepted a directory")
	}
	if w, err := Create(filepath.Join(dir, "no", "such", "dir", "t.json"), Config{}); err == nil {
		w.Close()
		t.Fatal("Create accepted a path in a missing directory")
	}
}

// TestTruncatedFileParses checks the file between writes: whole events
// after "[", no closing bracket — what a crash leaves.
func TestTruncatedFileParses(t *testing.T) {
	t.Parallel()
	w, path := newWriter(t, Config{BufferSize: 1 << 20, FlushInterval: -1})
	feed(w, leadWithThreeSubagents()...)
	if data, _ := os.ReadFile(path); validates(data) != nil || len(data) > 200 {
		t.Errorf("events reached the file before the buffer filled: %d bytes", len(data))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkTruncated(t, data)
}

// TestFlushInterval checks that an idle buffer reaches the file once an
// event arrives FlushInterval after the last write.
func TestFlushInterval(t *testing.T) {
	t.Parallel()
	w, path := newWriter(t, Config{FlushInterval: 10 * time.Millisecond}) // the clock steps 1 ms
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	header := size()
	feed(w, req("lead", "", 1), answer("lead", "", 1))
	if size() != header {
		t.Fatal("written before the interval passed")
	}
	for i := 2; size() == header; i++ {
		if i > 20 {
			t.Fatal("nothing written after the interval passed")
		}
		feed(w, req("lead", "", i), answer("lead", "", i))
	}
	data, _ := os.ReadFile(path)
	checkTruncated(t, data)
}

// TestCrashLeavesOpenableFile runs a process that writes a trace and
// exits without closing it.
func TestCrashLeavesOpenableFile(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "crash.json")
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+path)
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("helper: %v, want exit status 3", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := checkTruncated(t, data)
	if len(sum.Tracks) < 10 {
		t.Errorf("only %d tracks reached the file", len(sum.Tracks))
	}
}

func validates(data []byte) error {
	_, err := Validate(bytes.NewReader(data))
	return err
}

// checkTruncated checks a file without its closing bracket: Validate
// accepts it as truncated, and adding "]" (what viewers do) makes it a
// JSON array that validates whole.
func checkTruncated(t *testing.T, data []byte) Summary {
	t.Helper()
	sum, err := Validate(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Validate(truncated): %v", err)
	}
	if !sum.Truncated {
		t.Error("a file without ] is not reported as truncated")
	}
	fixed := append(bytes.Clone(data), ']')
	var evs []map[string]any
	if err := json.Unmarshal(fixed, &evs); err != nil {
		t.Fatalf("truncated file + ] is not JSON: %v", err)
	}
	whole, err := Validate(bytes.NewReader(fixed))
	if err != nil {
		t.Fatalf("Validate(truncated + ]): %v", err)
	}
	if whole.Truncated || whole.Events != sum.Events || whole.Events != len(evs) {
		t.Errorf("truncated %d events, closed %d (truncated=%v), JSON %d", sum.Events, whole.Events, whole.Truncated, len(evs))
	}
	return sum
}

// TestWriteErrorIsReported checks that a failed write stops the writer and
// surfaces from Flush and Close instead of being lost.
func TestWriteErrorIsReported(t *testing.T) {
	t.Parallel()
	w, path := newWriter(t, Config{BufferSize: 1})
	w.f.Close() // every write now fails
	feed(w, leadWithThreeSubagents()...)
	err := w.Flush()
	if err == nil || !strings.Contains(err.Error(), "write "+path) {
		t.Fatalf("Flush: %v, want a write error naming %s", err, path)
	}
	if cerr := w.Close(); cerr == nil || cerr.Error() != err.Error() {
		t.Errorf("Close: %v, want %v", cerr, err)
	}
	if cerr := w.Close(); cerr == nil {
		t.Error("a second Close forgot the error")
	}
}
