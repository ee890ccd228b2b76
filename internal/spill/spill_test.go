package spill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type item struct {
	N    int
	Key  string
	Body string
}

func TestOrderIsKeptAcrossTheSpill(t *testing.T) {
	q := New(Config[item]{Memory: 10, Dir: t.TempDir()})
	for i := range 1000 {
		q.Push(item{N: i, Body: fmt.Sprintf("body %d", i)})
	}
	if q.Len() != 1000 {
		t.Fatalf("Len = %d, want 1000", q.Len())
	}
	for i := range 1000 {
		got, err := q.Pop(t.Context())
		if err != nil || got.N != i || got.Body != fmt.Sprintf("body %d", i) {
			t.Fatalf("item %d: got %+v, %v", i, got, err)
		}
	}
	// After the spill is drained, items live in memory again.
	q.Push(item{N: 7})
	if got, err := q.Pop(t.Context()); err != nil || got.N != 7 {
		t.Fatalf("after the spill: %+v, %v", got, err)
	}
	q.Close()
	if _, err := q.Pop(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Pop after Close: %v", err)
	}
}

func TestMemoryStaysBounded(t *testing.T) {
	q := New(Config[item]{Memory: 8, Dir: t.TempDir()})
	for i := range 500 {
		q.Push(item{N: i})
		q.mu.Lock()
		inMem := len(q.mem)
		q.mu.Unlock()
		if inMem > 8 {
			t.Fatalf("after %d pushes %d items are in memory, over the limit of 8", i+1, inMem)
		}
	}
	q.Discard()
}

func TestCoalescingReplacesWaitingItemsOfOneKey(t *testing.T) {
	q := New(Config[item]{Memory: 100, Key: func(v item) string { return v.Key }})
	q.Push(item{N: 1, Key: "task-a"})
	q.Push(item{N: 2})
	q.Push(item{N: 3, Key: "task-a"}) // replaces 1 in place
	q.Push(item{N: 4, Key: "task-b"})
	var got []int
	for range 3 {
		v, err := q.Pop(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.N)
	}
	if fmt.Sprint(got) != "[3 2 4]" {
		t.Fatalf("popped %v, want [3 2 4]: the newer task-a progress in the older one's place", got)
	}
	// Once popped, a key starts afresh.
	q.Push(item{N: 5, Key: "task-a"})
	q.Push(item{N: 6, Key: "task-a"})
	if v, _ := q.Pop(t.Context()); v.N != 6 || q.Len() != 0 {
		t.Fatalf("got %d with %d left, want 6 alone", v.N, q.Len())
	}
}

func TestConcurrentProducersLoseNothing(t *testing.T) {
	q := New(Config[item]{Memory: 16, Dir: t.TempDir()})
	const producers, each = 8, 300
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				q.Push(item{N: p*each + i})
			}
		}()
	}
	seen := map[int]bool{}
	last := map[int]int{} // producer → last index seen, to check per-producer order
	for range producers * each {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		v, err := q.Pop(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if seen[v.N] {
			t.Fatalf("item %d came twice", v.N)
		}
		seen[v.N] = true
		p, i := v.N/each, v.N%each
		if prev, ok := last[p]; ok && i <= prev {
			t.Fatalf("producer %d: item %d after %d", p, i, prev)
		}
		last[p] = i
	}
	wg.Wait()
	if q.Len() != 0 {
		t.Fatalf("%d items left", q.Len())
	}
	q.Close()
}

func TestPopWaitsAndHonoursItsContext(t *testing.T) {
	q := New(Config[item]{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := q.Pop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Pop on an empty queue: %v", err)
	}
	done := make(chan item)
	go func() {
		v, _ := q.Pop(t.Context())
		done <- v
	}()
	q.Push(item{N: 42})
	if v := <-done; v.N != 42 {
		t.Fatalf("got %+v", v)
	}
	q.Close()
}
