package remote

import (
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on keyfix6b's remote fixes (a queued job's cancel takes it out
// of the queue, the ask/nonce for "running", trusted_workers re-read)
// from outside (keyattack6, /work/notes/keyattack6-log.md): a NATS client
// with the run of the queue's subjects and the JetStream API (issue 42's
// premise). A test that got through is skipped unless
// KEYATTACK_ESCAPES=1, and fails then.

func escapeKnown6(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("KEYATTACK_ESCAPES") != "1" {
		t.Skip("known escape (keyattack6-log.md): " + what + "; KEYATTACK_ESCAPES=1 runs it")
	}
}

// cancelledCopyRuns: the lead submits x while no worker serves the queue;
// the attacker copies x's message (headers and all: the lead's message
// id job-x) from the job stream as any reader can; the lead cancels x,
// which takes it out of the queue and settles it as cancelled; the
// attacker purges the stored cancellation (keyattack5's C7), makes the
// job stream forget x's message id as republish needs, and publishes
// the copy again. It returns how many times a worker that comes later
// ran x, and x's result as the lead's Wait sees it.
func cancelledCopyRuns(t *testing.T, forget func(t *testing.T, r *rig, st jetstream.Stream) (restore func())) (int32, *Result) {
	t.Helper()
	r := newRig(t)
	r.submit(r.job("x"))
	ctx := t.Context()
	js := r.client.s.js
	jobs, err := js.Stream(ctx, r.client.s.n.jobStream)
	if err != nil {
		t.Fatal(err)
	}
	r.client.mu.Lock()
	seq := r.client.seqs["x"]
	r.client.mu.Unlock()
	copyOf, err := jobs.GetMsg(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.client.Cancel(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	cancels, err := js.Stream(ctx, r.client.s.n.cancelStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := cancels.Purge(ctx, jetstream.WithPurgeSubject(r.client.s.n.cancels+".x")); err != nil {
		t.Fatal(err)
	}
	restore := forget(t, r, jobs)
	ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: copyOf.Subject, Header: copyOf.Header, Data: copyOf.Data})
	if err != nil {
		t.Fatal(err)
	}
	restore() // before any worker comes: a shape check at its read finds nothing
	if ack.Duplicate {
		t.Logf("the job stream dropped the copy as a duplicate of job-x")
		return 0, r.wait("x")
	}
	var calls atomic.Int32
	r.worker("w1", committing(&calls))
	deadline := time.Now().Add(15 * time.Second)
	for calls.Load() == 0 && time.Now().Before(deadline) {
		if ci, err := r.consumerInfo(); err == nil && ci.Delivered.Stream >= ack.Sequence && ci.NumAckPending == 0 {
			break // w1 handled the copy (dropped or ran it)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return calls.Load(), r.wait("x")
}

// TestKeyattack6CancelledJobCopiedAtOnce (idea 13): the copy published
// again at once, the job stream's duplicate window as the lead made it:
// the stream drops it (its message id is remembered though x's message
// was deleted).
func TestKeyattack6CancelledJobCopiedAtOnce(t *testing.T) {
	calls, res := cancelledCopyRuns(t, func(*testing.T, *rig, jetstream.Stream) func() { return func() {} })
	if calls != 0 {
		t.Fatalf("the lead cancelled x while it was queued (Wait says %s); a copy published again ran on w1 %d time(s)", res.Status, calls)
	}
}

// TestKeyattack6CancelledJobCopiedAfterTheWindowShrank (idea 13, 15):
// the job stream is not among the streams whose shape the lead and
// workers check (only results and cancellations are), so the attacker
// sets its duplicate window to 100 ms, waits it out, publishes the copy
// (the lead's own message id, stored well inside the worker's
// SubmitWindow of the signed issue time: replayed() passes it) and puts
// the window back. "Cancelled before it started" must mean it never
// runs: TaskStop stops a job wherever it is.
func TestKeyattack6CancelledJobCopiedAfterTheWindowShrank(t *testing.T) {
	escapeKnown6(t, "the job stream's duplicate window shrunk by a raw client; a cancelled queued job's copy runs")
	calls, res := cancelledCopyRuns(t, shrinkJobDuplicates)
	if calls != 0 {
		t.Fatalf("the lead cancelled x while it was queued, and its Wait says %s (%s); the attacker's copy (the lead's own message id, the job stream's duplicate window shrunk) ran on w1 %d time(s)", res.Status, res.Error, calls)
	}
}

// shrinkJobDuplicates sets the job stream's duplicate window to 100 ms
// and waits it out; the returned func puts the window back.
func shrinkJobDuplicates(t *testing.T, r *rig, st jetstream.Stream) func() {
	t.Helper()
	cfg := st.CachedInfo().Config
	was := cfg.Duplicates
	cfg.Duplicates = 100 * time.Millisecond
	if _, err := r.client.s.js.UpdateStream(t.Context(), cfg); err != nil {
		t.Skipf("the server refuses the change: %v", err)
	}
	time.Sleep(time.Second)
	return func() {
		cfg.Duplicates = was
		if _, err := r.client.s.js.UpdateStream(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeyattack6FinishedJobCopiedAfterTheWindowShrank (idea 14, same
// cause, no cancel): the attacker hears x's message on the job subject
// as it is published (a core subscription), w1 runs x and its result is
// stored; within the worker's SubmitWindow the attacker shrinks the job
// stream's duplicate window, publishes the copy with the lead's message
// id and puts the window back. The copy is a first delivery, so the
// worker does not look for x's stored result (worker.go: "a copy
// published again is a replay, dropped above" — by the message id and
// the stream's dedupe, which the attacker turned off). Nothing twice:
// held, by the worker's own record of what it ran (doc.go's limit names
// a replay once per worker).
func TestKeyattack6FinishedJobCopiedAfterTheWindowShrank(t *testing.T) {
	r := newRig(t)
	heard := make(chan *nats.Msg, 4)
	sub, err := r.client.nc.ChanSubscribe(r.client.s.n.jobs, heard)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	var calls atomic.Int32
	r.worker("w1", committing(&calls))
	r.submit(r.job("x"))
	if res := r.wait("x"); res.Status != StatusCompleted {
		t.Fatalf("x ended %s: %s", res.Status, res.Error)
	}
	copyOf := <-heard
	jobs, err := r.client.s.js.Stream(t.Context(), r.client.s.n.jobStream)
	if err != nil {
		t.Fatal(err)
	}
	restore := shrinkJobDuplicates(t, r, jobs)
	ack, err := r.client.s.js.PublishMsg(t.Context(), &nats.Msg{Subject: copyOf.Subject, Header: copyOf.Header, Data: copyOf.Data})
	if err != nil {
		t.Fatal(err)
	}
	restore()
	if ack.Duplicate {
		return
	}
	deadline := time.Now().Add(15 * time.Second)
	for calls.Load() < 2 && time.Now().Before(deadline) {
		if ci, err := r.consumerInfo(); err == nil && ci.Delivered.Stream >= ack.Sequence && ci.NumAckPending == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("x ran %d times: a copy of its message (the lead's own id, heard on the wire) published after its result, with the job stream's duplicate window shrunk and put back, ran again", n)
	}
}
