package bench

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/bench/trial"
	"github.com/cohort-dev/cohort/internal/cli"
)

// BenchmarkCLI runs the CLI in this process (cli.Main, as the binary's main
// does) on each end-to-end workload, against fakeserve in another process.
// It exists for profiles: -cpuprofile, -memprofile and -trace of this test
// binary show cohort's work only. Metrics: wall-s (cli.Main's run),
// cpu-self-s (this process: cohort) and cpu-tools-s (reaped children: the
// bash processes of Bash calls). The timed figures of the real binary
// (wall time, peak RSS) come from bench/cmd/benchall.
//
//	go test -run '^$' -bench 'CLI/parallel' -cpuprofile cpu.out ./bench/
func BenchmarkCLI(b *testing.B) {
	for _, w := range trial.Workloads {
		b.Run(w.Name, func(b *testing.B) {
			bins := binaries(b)
			for b.Loop() {
				runInProcess(b, bins, w.Spec, w.MaxConcurrent)
			}
		})
	}
}

func runInProcess(b *testing.B, bins *trial.Binaries, spec scenario.Spec, maxConcurrent int) {
	ws, err := trial.NewWorkspace(spec)
	if err != nil {
		b.Fatal(err)
	}
	defer trash.Put(ws) // deleted by TestMain, after the last run
	fake, err := trial.StartFake(b.Context(), bins.FakeServe)
	if err != nil {
		b.Fatal(err)
	}
	env := ws.Env(fake.URL)
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	self, children := rusage(b, syscall.RUSAGE_SELF), rusage(b, syscall.RUSAGE_CHILDREN)
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	code := cli.Main(ctx, cli.Invocation{
		Args: ws.Args(maxConcurrent), Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return env },
		Getwd: func() (string, error) { return ws.Project, nil },
	})
	wall := time.Since(start)
	// Bash processes are reaped during the run; fakeserve only in Finish.
	self, children = rusage(b, syscall.RUSAGE_SELF)-self, rusage(b, syscall.RUSAGE_CHILDREN)-children
	sum, _, ferr := fake.Finish()
	if _, err := trial.CheckResult(stdout.Bytes(), stderr.Bytes(), code); err != nil {
		b.Fatal(err)
	}
	if ferr != nil {
		b.Fatal(ferr)
	}
	if err := ws.Spec.Check(sum, trial.Limit(maxConcurrent)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(self.Seconds(), "cpu-self-s")
	b.ReportMetric(children.Seconds(), "cpu-tools-s")
}

// rusage returns user+system CPU time of who (RUSAGE_SELF, RUSAGE_CHILDREN).
func rusage(b *testing.B, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBinary runs the real binary on each workload, as benchall does
// (which also takes medians and prints the machine's facts). Metrics: wall-s
// (mean wall time of the cohort process), peak-rss-MB (the largest ru_maxrss
// over the iterations), cpu-s (cohort and its bash children) and
// fake-cpu-s.
func BenchmarkBinary(b *testing.B) {
	for _, w := range trial.Workloads {
		b.Run(w.Name, func(b *testing.B) {
			bins := binaries(b)
			var wall, cpu, fake time.Duration
			var peak int64
			n := 0
			for b.Loop() {
				res, err := trial.Run(b.Context(), trial.Config{Cohort: bins.Cohort, FakeServe: bins.FakeServe,
					Spec: w.Spec, MaxConcurrent: w.MaxConcurrent, Timeout: 5 * time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				if res.Check != nil {
					b.Fatal(res.Check)
				}
				wall, cpu, fake = wall+res.Wall, cpu+res.CPU, fake+res.FakeCPU
				peak = max(peak, res.MaxRSS)
				n++
			}
			b.ReportMetric(wall.Seconds()/float64(n), "wall-s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
			b.ReportMetric(cpu.Seconds()/float64(n), "cpu-s")
			b.ReportMetric(fake.Seconds()/float64(n), "fake-cpu-s")
		})
	}
}
