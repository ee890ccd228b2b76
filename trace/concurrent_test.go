package trace

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestConcurrentFeeding feeds 50 subagents from 50 goroutines while the
// lead's parallel Agent calls are open, and flushes concurrently.
func TestConcurrentFeeding(t *testing.T) {
	t.Parallel()
	const n = 50
	w, path := newWriter(t, Config{Now: time.Now, BufferSize: 4 << 10})
	feed(w, req("lead", "", 1))
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf("c%02d", i)
	}
	feed(w, answer("lead", "", 1, calls...))
	for _, c := range calls {
		feed(w, toolStart("lead", "", c, "Agent", `{}`))
	}
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() {
			feed(w, subagent(fmt.Sprintf("a%02d", i), "agent-"+c, c, "job "+c)...)
			feed(w, toolDone("lead", "", c, "Agent", false))
		})
	}
	wg.Go(func() {
		for range 20 {
			if err := w.Flush(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	feed(w, req("lead", "", 2), answer("lead", "", 2))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	sum := validateFile(t, path)
	agents := 0
	for _, tr := range sum.Tracks {
		if tr.Spans["agent"] == 0 {
			continue
		}
		agents++
		want := agentSpans(2)
		if tr.Name == "lead" {
			if tr.SortIndex != 0 {
				t.Errorf("lead sort index %d", tr.SortIndex)
			}
			continue
		}
		if diff := cmp.Diff(want, map[string]int{"agent": tr.Spans["agent"], "turn": tr.Spans["turn"], "model": tr.Spans["model"]}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tr.Name, diff)
		}
	}
	if agents != n+1 {
		t.Errorf("%d agent tracks, want %d", agents, n+1)
	}
	want := map[string]int{"agent": n + 1, "turn": 2*n + 2, "model": 2*n + 2, "tool": 3 * n}
	if diff := cmp.Diff(want, sum.Spans); diff != "" || sum.Unfinished != 0 {
		t.Errorf("spans (-want +got):\n%s\nunfinished: %d", diff, sum.Unfinished)
	}
}

// TestCloseWhileFeeding closes the writer while goroutines still send
// events: the file is whole and late events are dropped.
func TestCloseWhileFeeding(t *testing.T) {
	t.Parallel()
	w, path := newWriter(t, Config{Now: time.Now})
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 8 {
		wg.Go(func() {
			<-start
			for j := range 50 {
				c := fmt.Sprintf("c%d-%d", i, j)
				feed(w, subagent("a"+c, "agent-"+c, c, "x")...)
			}
		})
	}
	close(start)
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	wg.Wait()
	sum := validateFile(t, path)
	if sum.Truncated {
		t.Error("closed file is truncated")
	}
}
