package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
)

// The per-call cost of the sandbox: `bash -c true` through internal/proc,
// once as a plain child and once through the session's launcher (policy
// set up beforehand, as in a session after its first call). Each reports
// the median and p99 of its calls besides the mean, since the machine is
// shared and means move with the load:
//
//	go test -run XXX -bench BenchmarkBash -benchtime 400x -count 3 ./sandbox/
func BenchmarkBashPlain(b *testing.B) {
	benchBash(b, nil)
}

func BenchmarkBashSandboxed(b *testing.B) {
	benchSandboxed(b, Writing)
}

// BenchmarkBashSandboxedReadOnly is a call in the read-only profile, which
// every command allowed only as read-only gets (most of an agent's).
func BenchmarkBashSandboxedReadOnly(b *testing.B) {
	benchSandboxed(b, ReadOnly)
}

func benchSandboxed(b *testing.B, prof Profile) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	sb, err := New(Config{Home: root, TempRoot: root})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	l, err := sb.Launcher(b.Context(), root, prof)
	if err != nil {
		b.Fatal(err)
	}
	benchBash(b, l)
}

func benchBash(b *testing.B, l proc.Launcher) {
	dir := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH")}
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		exit, err := proc.Run(b.Context(), proc.Command{Path: "/bin/bash", Args: []string{"-c", "true"}, Dir: dir, Env: env,
			NewSession: true, Launcher: l, Timeout: 30 * time.Second})
		if err != nil || !exit.Success() {
			b.Fatalf("bash -c true: %v %v", exit, err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	if n := len(times); n > 0 {
		b.ReportMetric(float64(times[n/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(times[min(n-1, n*99/100)].Microseconds()), "p99-µs")
	}
}
