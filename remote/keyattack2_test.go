package remote

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on the job queue from outside (keyattack2, ideas 22, 27): a
// NATS client with the run of the queue's subjects, as issue 42's
// premise (no NATS permissions) allows. Each test asserts the refusal.

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
	t.Parallel()
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
	t.Parallel()
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
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	reports := r.reports()
	r.submit(r.job("k3"))
	forged, _ := json.Marshal(Result{JobID: "k3", Status: StatusCompleted, Text: "all done",
		Patch: []byte("From 0000 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] evil\n"), Worker: "w1"})
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".k3", forged, jetstream.WithMsgID("result-k3")); err != nil {
		t.Fatal(err)
	}
	// The forgery is stored before any worker runs; the real one still
	// lands (its message id is not "result-k3") and is the one taken.
	r.worker("w1", committing(nil))
	res := r.wait("k3")
	if res.Status != StatusCompleted || strings.Contains(string(res.Patch), "evil") || !strings.Contains(string(res.Patch), "k3.txt") {
		t.Fatalf("the lead took a forged result, or not the worker's: %+v", res)
	}
	expectReport(t, reports, "k3", "is not a signed result")
}

// reports collects what the rig's client reports of refused results.
func (r *rig) reports() chan string {
	ch := make(chan string, 16)
	r.client.report = func(id string, err error) {
		select {
		case ch <- id + ": " + err.Error():
		default:
		}
	}
	return ch
}

func expectReport(t *testing.T, reports chan string, id, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-reports:
			if strings.HasPrefix(got, id+": ") && strings.Contains(got, want) {
				return
			}
			t.Logf("report: %s", got)
		case <-deadline:
			t.Fatalf("no report for job %s saying %q", id, want)
		}
	}
}

// storedResult is the message stored on job id's result subject.
func (r *rig) storedResult(id string) []byte {
	r.t.Helper()
	st, err := r.client.s.js.Stream(r.t.Context(), r.client.s.n.resultStream)
	if err != nil {
		r.t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(r.t.Context(), r.client.s.n.results+"."+id)
	if err != nil {
		r.t.Fatal(err)
	}
	return m.Data
}

// sealedBy signs res as worker name's, whatever name its Worker field
// ends up holding.
func sealedBy(t *testing.T, name string, res Result) []byte {
	return testSigner(t, name).SealResult(&res)
}

// TestKeyattack2ResultSignedByAnotherWorker: a result for k4 signed by
// trusted worker w2's key but naming w1 is refused; so is one signed by a
// worker key the lead does not trust. The real one is taken.
func TestKeyattack2ResultSignedByAnotherWorker(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	reports := r.reports()
	r.workerKey("w2") // trusted, but runs nothing
	r.submit(r.job("k4"))
	sig := r.client.sigs["k4"]
	evil := Result{JobID: "k4", Status: StatusCompleted, Patch: []byte("Subject: [PATCH] evil\n"), Signature: sig}
	renamed := sealedBy(t, "w2", evil)
	var env Envelope
	_ = json.Unmarshal(renamed, &env)
	evil.Worker = "w1"
	env.Payload = mustJSON(evil) // names w1, signature still w2's over its own payload
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".k4", mustJSON(env)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.client.Lookup(t.Context(), "k4"); got != nil || err != nil {
		t.Fatalf("the renamed result was taken: %+v, %v", got, err)
	}
	expectReport(t, reports, "k4", "does not verify")
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".k4", sealedBy(t, "mallory", evil)); err != nil {
		t.Fatal(err)
	}
	r.worker("w1", committing(nil))
	res := r.wait("k4")
	if strings.Contains(string(res.Patch), "evil") || res.Worker != "w1" || res.Status != StatusCompleted {
		t.Fatalf("the lead took a result its worker did not make: %+v", res)
	}
	expectReport(t, reports, "k4", `worker key "mallory", which this lead does not trust`)
}

// TestKeyattack2OlderResultReplayed: the genuine signed result of job k5
// does not answer another job: published on results.k6, or stored when a
// new lead process submits a job with the same id k5.
func TestKeyattack2OlderResultReplayed(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.worker("w1", committing(nil))
	r.submit(r.job("k5"))
	r.wait("k5")
	old := r.storedResult("k5")
	reports := r.reports()
	r.client.mu.Lock() // Client.hear reads sigs from a NATS goroutine
	r.client.sigs["k6"] = []byte("the signature of a job k6 this lead sent")
	r.client.mu.Unlock()
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".k6", old); err != nil {
		t.Fatal(err)
	}
	if got, err := r.client.Lookup(t.Context(), "k6"); got != nil || err != nil {
		t.Fatalf("k5's result answered k6: %+v, %v", got, err)
	}
	expectReport(t, reports, "k6", `result of job "k5"`)

	// A new lead process, same key, submits another k5 (the stream drops
	// it as a duplicate): the stored result is not this job's.
	again, err := Dial(t.Context(), ClientConfig{Config: Config{URL: r.nats.URL()}, Queue: testQueue, Signer: r.signer, Workers: r.workers,
		Now: func() time.Time { return time.Now().Add(time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.Submit(t.Context(), r.job("k5"), r.repo, "HEAD"); err != nil {
		t.Fatal(err)
	}
	if got, err := again.Lookup(t.Context(), "k5"); got != nil || err != nil {
		t.Fatalf("the older k5's result answered the new k5: %+v, %v", got, err)
	}
}

// TestKeyattack2ResultWithAlteredPatch: the genuine signed result of k8,
// its patch altered and stored in its place, does not verify.
func TestKeyattack2ResultWithAlteredPatch(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.worker("w1", committing(nil))
	r.submit(r.job("k8"))
	r.wait("k8")
	var env Envelope
	if err := json.Unmarshal(r.storedResult("k8"), &env); err != nil {
		t.Fatal(err)
	}
	res, err := DecodeResult(env.Payload)
	if err != nil {
		t.Fatal(err)
	}
	res.Patch = append(res.Patch, "\n+evil line\n"...)
	env.Payload = mustJSON(res)
	reports := r.reports()
	// The genuine result is kept beside any other (keyfix4): purge it, so
	// the altered copy is the only one to read.
	st, err := r.client.s.js.Stream(t.Context(), r.client.s.n.resultStream)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(t.Context(), jetstream.WithPurgeSubject(r.client.s.n.results+".k8")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".k8", mustJSON(env)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.client.Lookup(t.Context(), "k8"); got != nil || err != nil {
		t.Fatalf("the altered result was taken: %+v, %v", got, err)
	}
	expectReport(t, reports, "k8", "does not verify")
}

// TestKeyattack2JobReplayedLater: a signed job stored by the server long
// after its issue time (a capture published again once the stream's
// duplicate window is over; here a lead whose clock is 6 minutes behind)
// is dropped unrun.
func TestKeyattack2JobReplayedLater(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	var calls atomic.Int32
	r.worker("w1", committing(&calls))
	late, err := Dial(t.Context(), ClientConfig{Config: Config{URL: r.nats.URL()}, Queue: testQueue, Signer: r.signer, Workers: r.workers,
		Now: func() time.Time { return time.Now().Add(-6 * time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if err := late.Submit(t.Context(), r.job("k9"), r.repo, "HEAD"); err != nil {
		t.Fatal(err)
	}
	r.submit(r.job("marker"))
	r.wait("marker")
	if n := calls.Load(); n != 1 {
		t.Fatalf("the runner ran %d times for the marker alone: the late job ran", n)
	}
}
