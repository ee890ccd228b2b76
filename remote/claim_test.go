package remote

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// stealJob makes the workers' consumer (a worker started and stopped),
// submits job id, and pulls it from the consumer as a thief would: the
// message it was handed, not acknowledged yet.
func stealJob(t *testing.T, r *rig, id string) jetstream.Msg {
	t.Helper()
	r.worker("w0", committing(nil))() // the consumer stays; no worker pulls now
	cons, err := r.client.s.js.Consumer(t.Context(), r.client.s.n.jobStream, r.client.s.n.consumer)
	if err != nil {
		t.Fatal(err)
	}
	r.submit(r.job(id))
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		return m
	}
	t.Fatalf("the thief was handed no job: %v", batch.Error())
	return nil
}

// A thief takes job f from the queue (and acks it) and stores a claim of
// f's next message under the name of w1 (a worker the lead and w2
// trust), signed with its own key, naming f's lineage as any reader of
// the job stream can: the lead does not take it for a claim (it submits
// f again), and w2 replaces it and runs f, once.
func TestClaimForgedByAThiefIsIgnored(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.client.claimWait = 2 * time.Second
	reports := r.reports()
	m := stealJob(t, r, "f")
	if err := m.Ack(); err != nil {
		t.Fatal(err)
	}
	meta, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	r.workerKey("w1")                                            // trusted, never started
	forger, err := NewSigner("w1", testSigner(t, "mallory").key) // w1's name, not w1's key
	if err != nil {
		t.Fatal(err)
	}
	forged := forger.sealClaim(claimOrder{JobID: "f", JobSignature: envelopeSignature(m.Data()), Sequence: meta.Sequence.Stream + 1, Delivery: 1})
	if _, err := r.client.s.claims.Put(t.Context(), "f", forged); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	r.worker("w2", committing(&calls), func(c *WorkerConfig) { c.Peers = r.workers })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := r.client.Wait(ctx, "f", nil)
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("job f, stolen and its claim forged: Wait got %+v, %v", res, err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("f ran %d times", n)
	}
	expectReport(t, reports, "f", "no worker this lead trusts claimed it")
}

// A thief holds job r (heartbeats it, so it is not redelivered) until
// the lead, seeing no claim, submits r again; then it gives r back, so
// that the first message and the second reach two idle workers at once.
// Each worker's runner waits until both were handed out: without the
// claim, both would run r. It runs once, whichever worker claims first.
func TestClaimRaceForARepublishedJob(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.client.claimWait = 2 * time.Second
	m := stealJob(t, r, "r")
	meta, err := m.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	first := meta.Sequence.Stream
	var calls atomic.Int32
	bothHanded := func(ctx context.Context, job *Job, run *Run, dir string, progress func(Progress)) (Outcome, error) {
		// The thief's delivery, the second message's and the first's
		// again: three deliveries by the consumer.
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if ci, err := r.consumerInfo(); err == nil && ci.Delivered.Consumer >= 3 {
				break
			}
		}
		return committing(&calls)(ctx, job, run, dir, progress)
	}
	peers := func(c *WorkerConfig) { c.Peers = r.workers } // each trusts the other's claims
	r.worker("w1", bothHanded, peers)
	r.worker("w2", bothHanded, peers)
	type waited struct {
		res *Result
		err error
	}
	done := make(chan waited, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	go func() {
		res, err := r.client.Wait(ctx, "r", nil)
		done <- waited{res, err}
	}()
	jobs, err := r.client.s.js.Stream(ctx, r.client.s.n.jobStream)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if err := m.InProgress(); err != nil {
			t.Fatal(err)
		}
		if info, err := jobs.Info(ctx); err == nil && info.State.LastSeq > first {
			break // submitted again
		}
		select {
		case <-ctx.Done():
			t.Fatal("the lead never submitted r again")
		case <-time.After(300 * time.Millisecond):
		}
	}
	if err := m.Nak(); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || got.res.Status != StatusCompleted {
		t.Fatalf("Wait(r): %+v, %v", got.res, got.err)
	}
	for {
		ci, err := r.consumerInfo()
		if err == nil && ci.NumAckPending == 0 && ci.NumPending == 0 && ci.Delivered.Consumer >= 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the workers did not finish with both messages of r")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("r, submitted again while its first message went back to the queue, ran %d times", n)
	}
}
