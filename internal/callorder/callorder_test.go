package callorder

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type sink struct{ got []string }

func (s *sink) push(ev string) { s.got = append(s.got, ev) }

func TestAnEventWaitsForItsCallsMessage(t *testing.T) {
	var g Gate[string]
	var s sink
	g.Admit("", "unrelated before", s.push)
	g.Streaming("call1")
	g.Admit("call1", "started call1", s.push)
	g.Admit("call9", "progress of another task", s.push) // behind the held one
	s.push("assistant with call1")
	g.Emitted([]string{"call1"}, s.push)
	g.Admit("call1", "notification call1", s.push)
	want := []string{"unrelated before", "assistant with call1", "started call1", "progress of another task", "notification call1"}
	if !slices.Equal(s.got, want) {
		t.Fatalf("got %q\nwant %q", s.got, want)
	}
}

func TestTwoMessagesReleaseInOrder(t *testing.T) {
	var g Gate[string]
	var s sink
	g.Streaming("a")
	g.Streaming("b")
	g.Admit("a", "started a", s.push)
	g.Admit("b", "started b", s.push)
	g.Emitted([]string{"b"}, s.push) // b's message first: a still waits, b behind it
	if len(s.got) != 0 {
		t.Fatalf("released %q while a's message streams", s.got)
	}
	g.Emitted([]string{"a"}, s.push)
	if want := []string{"started a", "started b"}; !slices.Equal(s.got, want) {
		t.Fatalf("got %q, want %q", s.got, want)
	}
}

func TestFlushLetsEverythingGo(t *testing.T) {
	var g Gate[string]
	var s sink
	g.Streaming("dropped")
	g.Admit("dropped", "started", s.push)
	g.Flush(s.push) // a retry dropped the message, or the turn ended
	g.Admit("dropped", "notification", s.push)
	if want := []string{"started", "notification"}; !slices.Equal(s.got, want) {
		t.Fatalf("got %q, want %q", s.got, want)
	}
}

// TestConcurrentAdmitsKeepEachTasksOrder: events admitted from many
// goroutines leave once each, each task's in its own order, none before
// its message.
func TestConcurrentAdmitsKeepEachTasksOrder(t *testing.T) {
	var g Gate[string]
	var mu sync.Mutex
	var out []string
	push := func(ev string) { mu.Lock(); out = append(out, ev); mu.Unlock() }
	const n = 20
	for i := range n {
		g.Streaming(fmt.Sprint("c", i))
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprint("c", i)
			g.Admit(id, id+" started", push)
			g.Admit(id, id+" done", push)
		})
	}
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprint("c", i)
	}
	wg.Go(func() { push("message"); g.Emitted(ids, push) })
	wg.Wait()
	g.Flush(push)
	if len(out) != 2*n+1 {
		t.Fatalf("%d events out, want %d: %q", len(out), 2*n+1, out)
	}
	pos := map[string]int{}
	for i, ev := range out {
		pos[ev] = i
	}
	for i := range n {
		id := fmt.Sprint("c", i)
		if pos[id+" started"] < pos["message"] || pos[id+" done"] < pos[id+" started"] {
			t.Fatalf("%s out of order: %q", id, out)
		}
	}
}

func TestCallIDs(t *testing.T) {
	got := CallIDs([]llm.Block{{Type: llm.BlockText, Text: "x"}, {Type: llm.BlockToolUse, ID: "t1"}, {Type: llm.BlockToolUse, ID: "t2"}})
	if !slices.Equal(got, []string{"t1", "t2"}) {
		t.Fatalf("got %q", got)
	}
}
