package remote

import (
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestStreamShapePutBack: another client sets the results and
// cancellations streams to keep one message per subject and 100 bytes
// (an older lead connecting, keyattack4 R3/R5). The lead's next look-up
// says so, naming the stream and the change, and puts the shape back; so
// does a worker's next read of the cancellations.
func TestStreamShapePutBack(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	reports := r.reports()
	r.submit(r.job("s1"))
	for _, name := range []string{r.client.s.n.resultStream, r.client.s.n.cancelStream} {
		st, err := r.client.s.js.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		cfg.MaxMsgsPerSubject, cfg.MaxBytes = 1, 100<<10
		if _, err := r.client.s.js.UpdateStream(t.Context(), cfg); err != nil {
			t.Skipf("the server refuses the change: %v", err)
		}
	}
	if res, err := r.client.Lookup(t.Context(), "s1"); res != nil || err != nil {
		t.Fatalf("Lookup = %+v, %v", res, err)
	}
	expectReport(t, reports, "s1", r.client.s.n.resultStream+" was changed (it keeps at most 1 messages per subject, at most 102400 bytes)")
	shape := func(name string) jetstream.StreamConfig {
		st, err := r.client.s.js.Stream(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().Config
	}
	if cfg := shape(r.client.s.n.resultStream); cfg.MaxMsgsPerSubject != -1 || cfg.MaxBytes != -1 {
		t.Fatalf("the results stream was not put back: %d per subject, %d bytes", cfg.MaxMsgsPerSubject, cfg.MaxBytes)
	}
	var said []error
	if _, err := r.client.s.stream(t.Context(), r.client.s.n.cancelStream, func(err error) { said = append(said, err) }); err != nil {
		t.Fatal(err)
	}
	if len(said) != 1 || shape(r.client.s.n.cancelStream).MaxMsgsPerSubject != -1 {
		t.Fatalf("the cancellations stream: told %v, now %+v", said, shape(r.client.s.n.cancelStream))
	}
	if _, err := r.client.s.stream(t.Context(), r.client.s.n.cancelStream, func(err error) { t.Errorf("told again: %v", err) }); err != nil {
		t.Fatal(err)
	}
}
