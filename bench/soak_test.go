package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/bench/trial"
	"github.com/cohort-dev/cohort/task"
)

// BenchmarkSoak is issue 25's soak: one session runs COHORT_SOAK_AGENTS
// (default 10,000) background agents of one Bash turn each, 100 per lead
// message, one message per Run (scenario.Spec.PerPrompt), against
// fakeserve in its own process (so the fake's memory is not weighed).
// After the first Run, after the warm-up (soakWarm agents) and after the
// last, once the finished agents have left memory (EvictAfter 200 ms) and
// their tasks the registry's listing, it takes the live heap after a GC
// and counts the agents whose conversation is in memory. Not in CI:
//
//	go test ./bench -run '^$' -bench BenchmarkSoak -benchtime 1x -timeout 60m
//
// It reports heap_first_MB, heap_warm_MB, heap_last_MB, in_memory_max
// (agents still held when measured) and agents, and fails if the heap
// grew by over 20 % from the warm-up to the end. Between the first batch
// and the warm-up the heap grows by bounded things that do not depend on
// how many agents have run: the HTTP/1.1 connection pool to the fake,
// which holds as many idle connections as the most requests ever in
// flight at once (a real API, over HTTP/2, needs one), and the maps that
// keep their peak capacity (BENCHMARKS.md §7 has the profile).
// COHORT_SOAK_HEAP=FILE writes heap profiles after the first batch
// (FILE.first), the warm-up (FILE.warm) and at the end (FILE); compare
// them with go tool pprof -base FILE.warm FILE.
func BenchmarkSoak(b *testing.B) {
	total := 10_000
	if v := os.Getenv("COHORT_SOAK_AGENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2*soakBatch || n%soakBatch != 0 {
			b.Fatalf("COHORT_SOAK_AGENTS=%q: want a multiple of %d, at least %d", v, soakBatch, 2*soakBatch)
		}
		total = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	bins, err := trial.Build(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer bins.Remove()
	if os.Getenv("COHORT_SOAK_HEAP") != "" {
		goruntime.MemProfileRate = 1024 // a profile fine enough to see a few KB per agent
	}
	for range b.N {
		m := soak(ctx, b, bins.FakeServe, total)
		b.ReportMetric(float64(m.first)/(1<<20), "heap_first_MB")
		b.ReportMetric(float64(m.warm)/(1<<20), "heap_warm_MB")
		b.ReportMetric(float64(m.last)/(1<<20), "heap_last_MB")
		b.ReportMetric(float64(m.inMemory), "in_memory_max")
		b.ReportMetric(float64(total), "agents")
		if float64(m.last) > 1.2*float64(m.warm) {
			b.Errorf("the live heap grew from %.1f MB after %d agents to %.1f MB after %d (over 20 %%)",
				float64(m.warm)/(1<<20), min(soakWarm, total), float64(m.last)/(1<<20), total)
		}
	}
}

const (
	soakBatch = 100
	// soakWarm is how many agents run before the heap is weighed as the
	// baseline the end is held to.
	soakWarm = 2_000
)

type soakMeasure struct {
	first, warm, last uint64
	inMemory          int
}

func soak(ctx context.Context, b *testing.B, fakeserve string, total int) soakMeasure {
	fake, err := trial.StartFake(ctx, fakeserve, "-nocache")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	project, home := filepath.Join(dir, "p"), filepath.Join(dir, "h")
	for _, d := range []string{project, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "PATH": os.Getenv("PATH"),
		"TMPDIR": os.TempDir()}
	s, err := cohort.New(ctx, cohort.Config{Dir: project, Home: env["COHORT_HOME"], BaseURL: fake.URL, APIKey: "soak",
		AllowedTools: []string{"Bash"}, EvictAfter: 200 * time.Millisecond, MaxConcurrentAgents: soakBatch, Stderr: io.Discard,
		Getenv: func(k string) string { return env[k] }, Environ: func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		}})
	if err != nil {
		fake.Finish()
		b.Fatal(err)
	}
	var m soakMeasure
	writeHeap := func(suffix string) {
		if f := os.Getenv("COHORT_SOAK_HEAP"); f != "" {
			if out, err := os.Create(f + suffix); err == nil {
				pprof.WriteHeapProfile(out)
				out.Close()
			}
		}
	}
	measure := func() uint64 {
		// The finished agents leave memory EvictAfter after their end.
		deadline := time.Now().Add(time.Minute)
		for {
			held := 0
			for _, a := range s.Agents() {
				if a.InMemory && a.Kind != "lead" {
					held++
				}
			}
			if held == 0 || time.Now().After(deadline) {
				m.inMemory = max(m.inMemory, held)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		// Their tasks stay listed (TaskList) for the registry's grace
		// after their notification; weigh the heap past it, both times.
		time.Sleep(task.DefaultEvictGrace + 500*time.Millisecond)
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	spec := scenario.Spec{Agents: total, Turns: 1, PerMessage: soakBatch, Tools: scenario.ToolsBash, Background: true, PerPrompt: true}
	prompt := spec.Prompt() + "\n" + scenario.NextPrompt
	for k := range total / soakBatch {
		for ev, err := range s.Run(ctx, prompt) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Type == cohort.EventResult && os.Getenv("COHORT_SOAK_DEBUG") != "" {
				b.Logf("batch %d: %s", k, ev.Result)
			}
			if ev.Type == cohort.EventResult && ev.IsError {
				b.Fatalf("batch %d failed: %s", k, ev.Result)
			}
		}
		prompt = scenario.NextPrompt
		if k == 0 {
			m.first = measure()
			m.warm = m.first
		}
		switch {
		case (k+1)*soakBatch == soakWarm:
			m.warm = measure()
			writeHeap(".warm")
		case k == 0:
			writeHeap(".first")
		case os.Getenv("COHORT_SOAK_DEBUG") != "" && (k == 1 || k == 4 || k%20 == 19):
			b.Logf("after batch %d: live heap %.2f MB", k+1, float64(measure())/(1<<20))
		}
	}
	m.last = measure()
	writeHeap("")
	if err := s.Close(); err != nil {
		b.Error(err)
	}
	sum, _, err := fake.Finish()
	if err != nil {
		b.Fatal(err)
	}
	if err := spec.Check(sum, 0); err != nil {
		b.Fatal(err)
	}
	return m
}
