package trace

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// cycle is one turn of an agent with one tool call: six events.
// Benchmarks replay it, so its ids repeat once their call has ended.
func cycle(agent, parent string, n int) []any {
	id := fmt.Sprintf("%s-t%d", agent, n)
	return []any{
		req(agent, parent, n), token(agent, parent), answer(agent, parent, n, id),
		toolStart(agent, parent, id, "Read", `{"file_path":"/src/main.go","limit":200}`),
		toolDone(agent, parent, id, "Read", false), token(agent, parent),
	}
}

func benchWriter(b *testing.B) *Writer {
	w, err := Create(filepath.Join(b.TempDir(), "bench.json"), Config{Now: time.Now})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := w.Close(); err != nil {
			b.Error(err)
		}
	})
	return w
}

// BenchmarkWriter measures events per second from one agent, including
// encoding and the buffered writes to a real file.
func BenchmarkWriter(b *testing.B) {
	w := benchWriter(b)
	evs := cycle("lead", "", 1)
	n := 0
	for b.Loop() {
		n++
		feed(w, evs...)
	}
	b.ReportMetric(float64(6*n)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkWriterParallel measures events per second with agents feeding
// from many goroutines at once.
func BenchmarkWriterParallel(b *testing.B) {
	w := benchWriter(b)
	var agents, total int64
	b.RunParallel(func(pb *testing.PB) {
		w.mu.Lock()
		agents++
		agent := fmt.Sprintf("agent-%d", agents)
		w.mu.Unlock()
		evs := cycle(agent, "c-"+agent, 1)
		n := 0
		for pb.Next() {
			n++
			feed(w, evs...)
		}
		w.mu.Lock()
		total += int64(6 * n)
		w.mu.Unlock()
	})
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "events/s")
}
