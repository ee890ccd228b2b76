package remote

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"sync"
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
// premise). All hold now, ungated: the cancelled job's copy (since
// fix42b: a worker asks its lead whether it cancelled a job before it
// starts it), the answer replayed to the same Wait (an answer to its own
// question for an earlier delivery than its runner's is refused), and
// the thief on the workers' consumer (since queue13: a job counts as
// taken only by a trusted worker's signed claim, claim.go).

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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// TestKeyattack6AnswerReplayedToTheSameWait (ideas 17, 18; keyattack5's
// P2 against keyfix6b's ask): the lead's Wait on b starts while w2 runs
// b and asks who runs it; w2 answers "running (delivery 1, asked N)",
// which the attacker hears. w2 stops (gives b back) and w1 runs b's
// second delivery, which the same Wait takes from w1's "running
// (delivery 2)". The attacker now replays w2's answer to N, and a token
// event of w2's: an answer to this Wait's own question makes its worker
// the runner whatever delivery it names (progressFrom.take), so w2's
// stale events are taken again and w1's refused, until w1's next
// heartbeat. The doc: only the worker that runs the job.
func TestKeyattack6AnswerReplayedToTheSameWait(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	started := make(chan string, 2)
	stop2 := r.worker("w2", counting(started))
	var answer, tokens atomic.Pointer[[]byte]
	sub, err := r.client.nc.Subscribe(r.client.s.n.progress+".b", func(m *nats.Msg) {
		r.client.mu.Lock()
		sig := r.client.sigs["b"]
		r.client.mu.Unlock()
		p, err := openProgress(r.client.workers, m.Data, "b", sig)
		if err != nil || p.Worker != "w2" {
			return
		}
		data := append([]byte(nil), m.Data...)
		if _, asked, ok := runningDelivery(p.Phase); ok && asked != "" {
			answer.Store(&data)
		} else if p.OutputTokens > 0 {
			tokens.Store(&data)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	r.submit(r.job("b"))
	type seen struct {
		p  Progress
		at time.Time
	}
	var mu sync.Mutex
	var got []seen
	ctx, cancel := context.WithCancel(t.Context())
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		_, _ = r.client.Wait(ctx, "b", func(p Progress) {
			mu.Lock()
			got = append(got, seen{p, time.Now()})
			mu.Unlock()
		})
	}()
	defer func() { cancel(); <-waited }()
	startedWithin(t, started)
	deadline := time.Now().Add(10 * time.Second)
	for answer.Load() == nil || tokens.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("w2's answer to the Wait's question and a token event of b not heard on the wire")
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop2() // w2 gives b back
	handed := time.Now()
	r.worker("w1", counting(started))
	startedWithin(t, started)
	fromW1 := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range got {
			if s.p.Worker == "w1" {
				return true
			}
		}
		return false
	}
	for deadline = time.Now().Add(10 * time.Second); !fromW1(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Wait took none of w1's events of b")
		}
	}
	replayed := time.Now()
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", *answer.Load())
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", *tokens.Load())
	}
	cancel()
	<-waited
	mu.Lock()
	defer mu.Unlock()
	var stale, w1 int
	for _, s := range got {
		switch {
		case s.at.Before(handed):
		case s.p.Worker == "w2" && s.at.After(replayed):
			stale++
		case s.p.Worker == "w1":
			w1++
		}
	}
	if stale > 0 {
		t.Fatalf("after b changed hands to w1, the lead's Wait took %d replayed event(s) of w2's (and %d of w1's)", stale, w1)
	}
}

// TestKeyattack6TrustFileRewrittenRightAfterTheRead (idea 22, no
// attacker): the user rewrites trusted_workers in place, same size, a
// moment after the running lead read it — within one tick of the
// kernel's coarse file clock, mtime and ctime could be those the lead
// recorded, and the leaked key would stay trusted until the next change.
// 200 tries, each rewrite right after a read.
func TestKeyattack6TrustFileRewrittenRightAfterTheRead(t *testing.T) {
	t.Parallel()
	k1 := base64.StdEncoding.EncodeToString(testSigner(t, "w1").key.Public().(ed25519.PublicKey))
	k3 := base64.StdEncoding.EncodeToString(testSigner(t, "w3").key.Public().(ed25519.PublicKey))
	kept := 0
	for range 200 {
		path := filepath.Join(t.TempDir(), "trusted_workers")
		writeFile(t, path, "w1 "+k1+"\n")
		tf, err := NewTrustFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("w1 " + k3 + "\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if k, ok := tf.Key("w1"); ok && base64.StdEncoding.EncodeToString(k) == k1 {
			kept++
		}
	}
	if kept > 0 {
		t.Fatalf("in %d of 200 tries, w1's key replaced in place right after the lead read trusted_workers stayed trusted", kept)
	}
}

// TestKeyattack6ThiefPullsFromTheWorkersConsumer (idea 28 on the job
// queue): the attacker pulls from the workers' durable consumer by name
// (it is neither deleted nor changed) and acknowledges job j: the
// work-queue stream drops it. No worker ever runs j; the lead's Wait
// must end (a result, or an error) or report why within a while, not
// wait in silence. Held since queue13: no worker claimed j, so the lead
// reports it and submits it again (claim.go), and w2 runs it.
func TestKeyattack6ThiefPullsFromTheWorkersConsumer(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.client.claimWait = 2 * time.Second
	reports := r.reports()
	stop := r.worker("w1", committing(nil))
	stop() // the consumer stays; no worker pulls now
	cons, err := r.client.s.js.Consumer(t.Context(), r.client.s.n.jobStream, r.client.s.n.consumer)
	if err != nil {
		t.Fatal(err)
	}
	r.submit(r.job("j"))
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	took := 0
	for m := range batch.Messages() {
		if err := m.Ack(); err == nil {
			took++
		}
	}
	if took != 1 {
		t.Skipf("the thief took %d jobs", took)
	}
	var calls atomic.Int32
	r.worker("w2", committing(&calls))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := r.client.Wait(ctx, "j", nil)
	if res == nil && len(reports) == 0 {
		t.Fatalf("job j, taken from the queue by a thief that acknowledged it, is run by no worker; the lead's Wait got %v with nothing reported", err)
	}
	if res == nil || res.Status != StatusCompleted || calls.Load() != 1 {
		t.Fatalf("job j, stolen from the queue: Wait got %+v, %v; w2 ran it %d times", res, err, calls.Load())
	}
	expectReport(t, reports, "j", "no worker this lead trusts claimed it")
}
