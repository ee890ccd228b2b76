package task

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder collects events; safe for concurrent use.
type recorder struct {
	mu  sync.Mutex
	evs []Event
}

func (r *recorder) add(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// ofTask returns the subtypes of the events of one task, in order.
func (r *recorder) ofTask(id string) []string {
	var out []string
	for _, e := range r.events() {
		if e.TaskID == id {
			out = append(out, e.Subtype)
		}
	}
	return out
}

// seeded is a deterministic random source for ids.
func seeded(seed byte) *rand.ChaCha8 {
	var s [32]byte
	s[0] = seed
	return rand.NewChaCha8(s)
}

// newReg returns a registry in a temp COHORT_HOME that is closed when the
// test ends. mod may adjust the config.
func newReg(t testing.TB, mod func(*Config)) (*Registry, *recorder) {
	t.Helper()
	rec := &recorder{}
	cfg := Config{Home: t.TempDir(), SessionID: "sess-1", OnEvent: rec.add}
	if mod != nil {
		mod(&cfg)
	}
	r, err := NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeReg(t, r) })
	return r, rec
}

func closeReg(t testing.TB, r *Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// block returns a run function that waits for its ctx to end or release
// to be closed, and completes with text.
func block(release <-chan struct{}, text string) RunFunc {
	return func(ctx context.Context, _ *Task) (Outcome, error) {
		select {
		case <-ctx.Done():
			return Outcome{}, ctx.Err()
		case <-release:
			return Outcome{Text: text}, nil
		}
	}
}

func done(text string) RunFunc {
	return func(context.Context, *Task) (Outcome, error) { return Outcome{Text: text}, nil }
}

func waitDoneT(t testing.TB, tk *Task) State {
	t.Helper()
	select {
	case <-tk.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("task %s did not finish", tk.ID())
	}
	return tk.State()
}
