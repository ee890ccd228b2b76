package remote

import (
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on the job queue from outside (keyattack2, ideas 22, 27): a
// NATS client with the run of the queue's subjects, as issue 42's
// premise (no NATS permissions) allows. Each test asserts the refusal;
// one that got through is skipped unless KEYATTACK_ESCAPES=1 (see
// /work/notes/keyattack2-log.md).

func knownEscape(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("KEYATTACK_ESCAPES") != "1" {
		t.Skip("known escape, not fixed: " + why + " (run with KEYATTACK_ESCAPES=1)")
	}
}

// capturedJob submits job id and returns its envelope as it went on the
// wire.
func capturedJob(t *testing.T, r *rig, id string) []byte {
	t.Helper()
	got := make(chan []byte, 1)
	sub, err := r.client.nc.Subscribe(r.client.s.n.jobs, func(m *nats.Msg) {
		select {
		case got <- m.Data:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := r.client.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	r.submit(r.job(id))
	select {
	case d := <-got:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("the job was not seen on the wire")
		return nil
	}
}

// TestKeyattack2JobReplayedAfterItsResult (idea 22): a signed job,
// captured on the wire, is published again (without its message id)
// after its result is stored: the worker does not run it twice.
func TestKeyattack2JobReplayedAfterItsResult(t *testing.T) {
	r := newRig(t)
	var calls atomic.Int32
	r.worker("w1", committing(&calls))
	wire := capturedJob(t, r, "k1")
	if res := r.wait("k1"); res.Status != StatusCompleted {
		t.Fatalf("first run: %+v", res)
	}
	r.publishRaw(wire)
	r.submit(r.job("marker"))
	r.wait("marker")
	if n := calls.Load(); n != 2 {
		t.Fatalf("the runner ran %d times for one job and a marker: the replayed job ran again", n)
	}
}

// TestKeyattack2JobReplayedAfterItsResultIsPurged (idea 22): job k2
// ran on worker w1, which then stopped; the attacker purges the job's
// stored result (results.<id>, the record a worker asks before running)
// and publishes the captured signed job again (issued minutes ago,
// inside MaxAge, a day). Worker w2 must not run it a second time. (On
// w1 itself the replay does not run either, but only because the job's
// directory is left there: it is retried until MaxDeliver.)
func TestKeyattack2JobReplayedAfterItsResultIsPurged(t *testing.T) {
	knownEscape(t, "a job whose stored result was purged runs again on another worker when replayed: the 'already run' record is a deletable, unsigned result (keyattack2 idea 22)")
	r := newRig(t)
	var calls1, calls2 atomic.Int32
	stop := r.worker("w1", committing(&calls1))
	wire := capturedJob(t, r, "k2")
	r.wait("k2")
	stop()
	r.worker("w2", committing(&calls2))
	st, err := r.client.s.js.Stream(t.Context(), r.client.s.n.resultStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(t.Context(), jetstream.WithPurgeSubject(r.client.s.n.results+".k2")); err != nil {
		t.Fatal(err)
	}
	r.publishRaw(wire)
	r.submit(r.job("marker"))
	r.wait("marker")
	if n := calls2.Load(); n != 1 {
		t.Fatalf("worker w2 ran %d jobs for the marker alone: the replayed job k2 ran a second time", n)
	}
}

// TestKeyattack2ForgedResult (idea 27): before any worker takes job k3,
// the attacker publishes a "completed" result for it on results.k3 with
// a patch of its own. The lead must not take a result no worker it
// trusts made (results are not signed).
func TestKeyattack2ForgedResult(t *testing.T) {
	knownEscape(t, "job results are unsigned: any client that may publish on PREFIX.results.<id> answers the lead first, patch included (keyattack2 idea 27)")
	r := newRig(t)
	r.submit(r.job("k3"))
	forged, _ := json.Marshal(Result{JobID: "k3", Status: StatusCompleted, Text: "all done",
		Patch: []byte("From 0000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] evil\n"), Worker: "w1"})
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".k3", forged, jetstream.WithMsgID("result-k3")); err != nil {
		t.Fatal(err)
	}
	res := r.wait("k3")
	if res.Status == StatusCompleted && strings.Contains(string(res.Patch), "evil") {
		t.Fatalf("the lead took a forged result: %+v", res)
	}
}
