package holdgate

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder keeps what a gate passed and dropped.
type recorder struct {
	mu      sync.Mutex
	passed  []string
	dropped []string
	asking  int
	overlap bool
}

func (r *recorder) config(ask func(string) (bool, string, error)) Config[string] {
	return Config[string]{
		Ask: func(_ context.Context, m string) (bool, string, error) {
			r.mu.Lock()
			r.asking++
			r.overlap = r.overlap || r.asking > 1
			r.mu.Unlock()
			defer func() { r.mu.Lock(); r.asking--; r.mu.Unlock() }()
			return ask(m)
		},
		Pass:    func(m string) { r.mu.Lock(); r.passed = append(r.passed, m); r.mu.Unlock() },
		Dropped: func(m, why string) { r.mu.Lock(); r.dropped = append(r.dropped, m+": "+why); r.mu.Unlock() },
	}
}

// TestOneQuestionAtATimeInOrder: messages are asked about one at a time,
// in arrival order; approved ones pass in that order; a refusal and a
// question that failed drop theirs, with why.
func TestOneQuestionAtATimeInOrder(t *testing.T) {
	r := &recorder{}
	last := make(chan struct{})
	g := New(r.config(func(m string) (bool, string, error) {
		switch m {
		case "no":
			return false, "not now", nil
		case "broken":
			return false, "", errors.New("nobody answered")
		case "end":
			close(last)
		}
		return true, "", nil
	}))
	for _, m := range []string{"a", "no", "b", "broken", "c", "end"} {
		g.Hold(m)
	}
	<-last
	g.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Equal(r.passed, []string{"a", "b", "c", "end"}) {
		t.Errorf("passed %q", r.passed)
	}
	if !slices.Equal(r.dropped, []string{"no: not now", "broken: nobody answered"}) {
		t.Errorf("dropped %q", r.dropped)
	}
	if r.overlap {
		t.Error("two questions were asked at once")
	}
}

// TestCloseDropsWhatWaits: Close cancels the question being asked and
// drops it and what waits behind it; nothing passes after Close, and a
// message held after Close is dropped at once.
func TestCloseDropsWhatWaits(t *testing.T) {
	r := &recorder{}
	asked := make(chan struct{})
	var g *Gate[string]
	cfg := r.config(nil)
	cfg.Ask = func(ctx context.Context, m string) (bool, string, error) {
		close(asked)
		<-ctx.Done()
		return false, "", ctx.Err()
	}
	g = New(cfg)
	g.Hold("first")
	g.Hold("second")
	<-asked
	g.Close()
	g.Hold("third")
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.passed) != 0 {
		t.Errorf("passed %q after Close", r.passed)
	}
	if !slices.Equal(r.dropped, []string{"first: context canceled", "second: the session is closing", "third: the session is closing"}) {
		t.Errorf("dropped %q", r.dropped)
	}
}
