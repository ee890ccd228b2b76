package task

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestOutputWritesAndFlushesOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.output")
	o, err := CreateOutput(path, OutputConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 500 {
		line := fmt.Sprintf("line %d", i)
		want = append(want, line)
		if err := o.WriteLine(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.WriteJSON(map[string]any{"type": "assistant", "n": 1}); err != nil {
		t.Fatal(err)
	}
	want = append(want, `{"n":1,"type":"assistant"}`)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, readLines(t, path)); diff != "" {
		t.Fatalf("file (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if err := o.WriteLine("late"); !errors.Is(err, ErrOutputClosed) {
		t.Fatalf("write after Close = %v", err)
	}
	if err := o.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if got := o.Tail(1); !cmp.Equal(got, want[len(want)-1:]) {
		t.Fatalf("tail after close = %q", got)
	}
	if err := o.WriteJSON(func() {}); err == nil {
		t.Fatal("WriteJSON of a func succeeded")
	}
}

func TestOutputConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.output")
	o, err := CreateOutput(path, OutputConfig{MaxPending: 512})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if err := o.WriteLine(fmt.Sprintf("w%d-%d", w, i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	if len(lines)+int(o.Dropped()) != 1600 {
		t.Fatalf("%d lines + %d dropped, want 1600", len(lines), o.Dropped())
	}
	// Each writer's lines keep their order.
	next := map[string]int{}
	for _, l := range lines {
		var w, i int
		if _, err := fmt.Sscanf(l, "w%d-%d", &w, &i); err != nil {
			continue // a drop marker
		}
		key := fmt.Sprint(w)
		if i < next[key] {
			t.Fatalf("writer %d out of order at %d", w, i)
		}
		next[key] = i + 1
	}
}

func TestOutputRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "victim")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.output")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	_, err := CreateOutput(path, OutputConfig{})
	if !errors.Is(err, ErrSymlink) || !strings.Contains(err.Error(), path) {
		t.Fatalf("CreateOutput over a symlink = %v, want ErrSymlink naming the path", err)
	}
	// A dangling link is refused too, and nothing is created behind it.
	dangling := filepath.Join(dir, "b.output")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateOutput(dangling, OutputConfig{}); !errors.Is(err, ErrSymlink) {
		t.Fatalf("dangling link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("followed the dangling link")
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Fatalf("target changed: %q", b)
	}
	// An existing regular file is not overwritten either.
	if _, err := CreateOutput(target, OutputConfig{}); !errors.Is(err, os.ErrExist) {
		t.Fatalf("existing file: %v", err)
	}
}

func TestOutputCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.output")
	const limit = 1000
	o, err := CreateOutput(path, OutputConfig{MaxBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) // 100 bytes with its newline
	for range 50 {
		if err := o.WriteLine(line); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > limit {
		t.Fatalf("file is %d bytes, cap %d", len(b), limit)
	}
	lines := readLines(t, path)
	notes := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "[output truncated") {
			notes++
		}
	}
	if notes != 1 || !strings.HasPrefix(lines[len(lines)-1], "[output truncated") {
		t.Fatalf("want exactly one truncation note at the end, got %q", lines)
	}
	if n := len(lines) - 1; n != (limit-noteReserve)/100 {
		t.Fatalf("%d data lines kept, want %d", n, (limit-noteReserve)/100)
	}
	if got := o.Tail(3); !cmp.Equal(got, []string{line, line, line}) {
		t.Fatal("tail should keep lines past the cap")
	}
}

func TestOutputTailRing(t *testing.T) {
	o, err := CreateOutput(filepath.Join(t.TempDir(), "x.output"), OutputConfig{MaxTailLine: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := o.Tail(5); len(got) != 0 {
		t.Fatalf("empty tail = %q", got)
	}
	for i := range 2500 {
		if err := o.WriteLine(fmt.Sprintf("l%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	all := o.Tail(0)
	if len(all) != DefaultTailLines || all[0] != "l1500" || all[999] != "l2499" {
		t.Fatalf("tail holds %d lines from %q to %q", len(all), all[0], all[len(all)-1])
	}
	if diff := cmp.Diff([]string{"l2497", "l2498", "l2499"}, o.Tail(3)); diff != "" {
		t.Fatal(diff)
	}
	// Multi-line writes count as several lines; long lines are cut.
	o.WriteLine("p\nq")
	o.WriteLine(strings.Repeat("é", 100))
	got := o.Tail(3)
	if got[0] != "p" || got[1] != "q" {
		t.Fatalf("multi-line tail %q", got)
	}
	if len(got[2]) > 64+len("… [line truncated]") || !strings.HasSuffix(got[2], "[line truncated]") ||
		!strings.HasPrefix(got[2], "éé") || strings.ContainsRune(got[2], '\uFFFD') {
		t.Fatalf("long line kept as %q", got[2])
	}
}

// stalledOutput is an Output whose "disk" is a pipe nobody reads until
// the test says so.
func stalledOutput(t *testing.T, cfg OutputConfig) (*Output, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	o, err := newOutput(w, "pipe", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o, r
}

func TestOutputBoundedWhenDiskStalls(t *testing.T) {
	const maxPending = 4096
	o, r := stalledOutput(t, OutputConfig{MaxPending: maxPending, BlockTimeout: time.Millisecond})
	defer r.Close()
	line := strings.Repeat("z", 1023)
	// The pipe holds 64 KiB; write far more than that plus the buffer.
	for range 400 {
		if err := o.WriteLine(line); err != nil {
			t.Fatal(err)
		}
		o.mu.Lock()
		pending := len(o.pending)
		o.mu.Unlock()
		if pending > maxPending {
			t.Fatalf("pending buffer grew to %d bytes, bound %d", pending, maxPending)
		}
	}
	dropped := o.Dropped()
	if dropped == 0 {
		t.Fatal("nothing dropped though the disk never drained")
	}
	read := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); read <- b }()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(<-read)))
	sc.Buffer(nil, 1<<20)
	var kept, marked int64
	for sc.Scan() {
		var n int64
		if _, err := fmt.Sscanf(sc.Text(), "[%d lines dropped", &n); err == nil {
			marked += n
			continue
		}
		if sc.Text() != line {
			t.Fatalf("unexpected line %.40q", sc.Text())
		}
		kept++
	}
	if marked != dropped || kept+dropped != 400 {
		t.Fatalf("kept %d, dropped %d, markers say %d; want kept+dropped = 400 and markers = dropped", kept, dropped, marked)
	}
}

func TestOutputCloseReleasesBlockedWriter(t *testing.T) {
	o, r := stalledOutput(t, OutputConfig{MaxPending: 2048, BlockTimeout: time.Hour})
	line := strings.Repeat("q", 1023)
	errs := make(chan error, 1)
	go func() {
		for {
			if err := o.WriteLine(line); err != nil {
				errs <- err
				return
			}
		}
	}()
	// Wait until the writer is blocked on a full buffer, then close.
	for {
		o.mu.Lock()
		full := len(o.pending)+len(line)+1 > 2048
		o.mu.Unlock()
		if full {
			break
		}
		time.Sleep(time.Millisecond)
	}
	go io.Copy(io.Discard, r)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; !errors.Is(err, ErrOutputClosed) {
		t.Fatalf("blocked writer got %v", err)
	}
	r.Close()
}

func TestOutputWriteError(t *testing.T) {
	o, r := stalledOutput(t, OutputConfig{})
	r.Close() // writes now fail with EPIPE
	o.WriteLine("a")
	var err error
	for range 1000 {
		if err = o.WriteLine("b"); err != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), "write") {
		t.Fatalf("write to a broken pipe: %v", err)
	}
	if err := o.Close(); err == nil {
		t.Fatal("Close hid the write error")
	}
}
