package remote

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestLeadAnswersWhetherItCancelled: the copy of a job x the lead took
// out of the queue, put back with the lead's own message id after the
// stored cancellation was purged and the job stream made anew (its
// message ids forgotten: keyattack6), does not run though someone else listens where
// the lead answers, and answers every question with junk and with the
// lead's cancellation of another job v: the lead's answer is believed,
// the others are not taken for it.
func TestLeadAnswersWhetherItCancelled(t *testing.T) {
	t.Parallel()
	var answered atomic.Int32
	calls, res := cancelledCopyRuns(t, func(t *testing.T, r *rig, st jetstream.Stream) func() {
		other, err := nats.Connect(r.nats.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(other.Close)
		// The lead's cancellation of another job v, as anyone heard it.
		r.submit(r.job("v"))
		if err := r.client.Cancel(t.Context(), "v"); err != nil {
			t.Fatal(err)
		}
		otherCancel := r.signer.SealCancel("v", r.client.sigs["v"])
		if _, err := other.Subscribe(r.client.s.n.cancelled+".*", func(m *nats.Msg) {
			answered.Add(1)
			_ = m.Respond([]byte("not cancelled"))
			_ = m.Respond(otherCancel)
		}); err != nil {
			t.Fatal(err)
		}
		if err := other.Flush(); err != nil {
			t.Fatal(err)
		}
		// The job stream deleted and made again as it was: it has
		// forgotten every message id (the duplicate window shrunk and put
		// back, as keyattack6 did, forgets them too, but not at a moment
		// a test can count on).
		cfg := st.CachedInfo().Config
		if err := r.client.s.js.DeleteStream(t.Context(), cfg.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := r.client.s.js.CreateStream(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
		return func() {}
	})
	if res.Status != StatusCancelled || calls != 0 {
		t.Fatalf("x, cancelled while queued (Wait says %s), ran %d time(s) from the attacker's copy though its lead answered", res.Status, calls)
	}
	if answered.Load() == 0 {
		t.Fatal("no worker asked whether x was cancelled")
	}
}

// TestJobRunsWhenSomeoneElseListens: no lead cancelled z, but someone
// listens on the subject a lead answers on and answers junk: the worker
// waits for its lead's answer, at most leadAnswerWait, then runs z.
func TestJobRunsWhenSomeoneElseListens(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	other, err := nats.Connect(r.nats.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Subscribe(r.client.s.n.cancelled+".*", func(m *nats.Msg) { _ = m.Respond([]byte("cancelled")) }); err != nil {
		t.Fatal(err)
	}
	if err := other.Flush(); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	r.worker("w1", committing(&calls))
	start := time.Now()
	r.submit(r.job("z"))
	if res := r.wait("z"); res.Status != StatusCompleted || calls.Load() != 1 {
		t.Fatalf("z ended %s (%s), ran %d time(s)", res.Status, res.Error, calls.Load())
	}
	if took := time.Since(start); took < leadAnswerWait {
		t.Fatalf("z ran after %s: the worker did not wait for its lead's answer (%s)", took, leadAnswerWait)
	}
}
