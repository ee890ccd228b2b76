package remote

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on session 8's signed cancellations and progress, and on the
// trusted_workers file, from outside (keyattack4,
// /work/notes/keyattack4-log.md): a NATS client with the run of the
// queue's subjects (issue 42's premise), sometimes holding the key of a
// second lead or worker the victim also trusts. Each test asserts the
// promise (all of them hold since keyfix5b/keyfix6b; none is gated).

// trustLead adds lead name's test key to the workers' trust file.
func (r *rig) trustLead(name string) *Signer {
	r.t.Helper()
	s := testSigner(r.t, name)
	if err := r.ring.Add(name, s.key.Public().(ed25519.PublicKey)); err != nil {
		r.t.Fatal(err)
	}
	return s
}

// TestKeyattack4CancelsNotForThisJob (ideas C1-C4, C6): job x runs on w1,
// job y is queued. Published on cancel.x: the lead's own signed cancel of
// y re-addressed, the lead's cancel of an older job x, a cancel of x
// signed by bob (a second lead the worker also trusts) quoting x's real
// signature, bob's envelope relabelled as the lead's, and 900 KiB of
// junk. Job x keeps running through all of them; the lead's real
// cancellation still stops it after.
func TestKeyattack4CancelsNotForThisJob(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	bob := r.trustLead("bob")
	started := make(chan string, 2)
	r.worker("w1", blocking(started))
	r.submit(r.job("x"))
	startedWithin(t, started)
	r.submit(r.job("y"))
	sigX, sigY := r.client.sigs["x"], r.client.sigs["y"]
	var relabelled Envelope
	if err := json.Unmarshal(bob.SealCancel("x", sigX), &relabelled); err != nil {
		t.Fatal(err)
	}
	relabelled.Key = "alice"
	for name, data := range map[string][]byte{
		"y's cancel":        r.signer.SealCancel("y", sigY),
		"older x's cancel":  r.signer.SealCancel("x", []byte("an older job x's signature")),
		"bob's cancel":      bob.SealCancel("x", sigX),
		"bob's, relabelled": mustJSON(relabelled),
		"junk":              []byte(strings.Repeat("j", 900<<10)),
	} {
		if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.cancels+".x", data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if res, err := endedWithin5s(t, r, "x"); err == nil {
		t.Fatalf("a cancellation not the lead's for job x stopped it: %+v", res)
	}
	if err := r.client.Cancel(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	if res := r.wait("x"); res.Status != StatusCancelled {
		t.Fatalf("after the lead's own cancellation, job x ended %+v", res)
	}
}

// progressSeen runs Wait on id for d while publish sends events on
// progress.<id>, and returns what reached the callback with tokens.
func progressSeen(t *testing.T, r *rig, id string, d time.Duration, publish func()) []Progress {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	got := make(chan Progress, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			publish()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	_, _ = r.client.Wait(ctx, id, func(p Progress) {
		if p.InputTokens == 0 && p.OutputTokens == 0 {
			return // the worker's own "running" event
		}
		select {
		case got <- p:
		default:
		}
	})
	<-done
	close(got)
	var out []Progress
	for p := range got {
		out = append(out, p)
	}
	return out
}

// counting is a blocking runner that reports tokens every 20 ms, so
// that its events are on the wire whenever someone listens (core NATS).
func counting(started chan<- string) Runner {
	return func(ctx context.Context, job *Job, run *Run, dir string, progress func(Progress)) (Outcome, error) {
		started <- job.ID
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for n := int64(1); ; n++ {
			progress(Progress{OutputTokens: n})
			select {
			case <-ctx.Done():
				return Outcome{Text: "stopped"}, ctx.Err()
			case <-tick.C:
			}
		}
	}
}

// TestKeyattack4ProgressFromElsewhere (ideas P1, P2): job a runs on w1,
// b on w2, each reporting tokens. A genuine signed event of a, captured
// on the wire, is published on progress.b, and w1's key signs an event
// of b bound to an older job b's signature. The lead's Wait on b takes
// only b's own events (from w2).
func TestKeyattack4ProgressFromElsewhere(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	started := make(chan string, 2)
	r.worker("w1", counting(started))
	r.submit(r.job("a"))
	startedWithin(t, started)
	r.worker("w2", counting(started))
	r.submit(r.job("b"))
	startedWithin(t, started)
	wire := make(chan []byte, 1)
	sub, err := r.client.nc.Subscribe(r.client.s.n.progress+".a", func(m *nats.Msg) {
		select {
		case wire <- m.Data:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	var captured []byte
	select {
	case captured = <-wire:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress of job a seen on the wire")
	}
	older := testSigner(t, "w1").SealProgress(Progress{JobID: "b", Worker: "w1", InputTokens: 1e12, OutputTokens: 1e12}, []byte("an older job b's signature"))
	seen := progressSeen(t, r, "b", 3*time.Second, func() {
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", captured)
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", older)
	})
	if len(seen) == 0 {
		t.Fatal("the lead's Wait on b took none of b's own events")
	}
	for _, p := range seen {
		if p.JobID != "b" || p.Worker != "w2" {
			t.Fatalf("the lead's Wait on b took an event not of b's worker: %+v", p)
		}
	}
}

// TestKeyattack4ProgressFromATrustedWorkerThatDidNotTakeIt (idea P3):
// w3 is trusted by the lead but runs nothing; it signs 10^12 tokens for
// job b (run by w1) and names w1 as the worker. The lead takes it: the
// doc's "a worker the lead trusts can answer any job it can see" covers
// results; for progress it means any trusted worker sets any job's
// recorded spend, under another worker's name.
func TestKeyattack4ProgressFromATrustedWorkerThatDidNotTakeIt(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	started := make(chan string, 1)
	r.worker("w1", blocking(started))
	w3 := r.workerKey("w3")
	r.submit(r.job("b"))
	startedWithin(t, started)
	evil := w3.SealProgress(Progress{JobID: "b", Worker: "w1", InputTokens: 1e12, OutputTokens: 1e12}, r.client.sigs["b"])
	if seen := progressSeen(t, r, "b", 3*time.Second, func() {
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", evil)
	}); len(seen) > 0 {
		t.Fatalf("the lead took w3's signed progress of job b (run by w1), naming w1: %+v", seen[0])
	}
}

// TestKeyattack4RefusalOracleUnsignedField (idea R1): the refusal oracle
// again, with the payload AND the signature byte for byte the lead's:
// only the envelope's key name is changed (to a lead the worker does not
// trust, or to one it trusts, whose key does not verify it). The job
// stream is deleted and made again first, so the copy, published with
// the lead's message id job-o1, is not dropped as a duplicate and a
// trusted worker refuses it, quoting the lead's signature over the
// lead's very payload. Since keyfix4 the refusal names the digest of
// the whole message refused, which is not the one the lead published:
// the real job, still running on w1, must go on.
func TestKeyattack4RefusalOracleUnsignedField(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	for name, key := range map[string]string{"untrusted key name": "mallory", "another trusted lead": "bob"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits 5 s for an end that must not come
			r := newRig(t)
			r.trustLead("bob")
			reports := r.reports()
			started := make(chan string, 1)
			r.worker("w1", blocking(started))
			wire := capturedJob(t, r, "o1")
			startedWithin(t, started)
			st, err := r.client.s.js.Stream(t.Context(), r.client.s.n.jobStream)
			if err != nil {
				t.Fatal(err)
			}
			cfg := st.CachedInfo().Config
			if err := r.client.s.js.DeleteStream(t.Context(), cfg.Name); err != nil {
				t.Fatal(err)
			}
			if _, err := r.client.s.js.CreateStream(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
			if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.jobs, altered(t, wire, key, ""), jetstream.WithMsgID("job-o1")); err != nil {
				t.Fatal(err)
			}
			r.worker("w2", committing(nil))
			if res, err := endedWithin5s(t, r, "o1"); err == nil {
				t.Fatalf("the real job o1, still running, was ended by a refusal of a copy signed as %q: %+v", key, res)
			}
			expectReport(t, reports, "o1", "not the one this lead published")
		})
	}
}

// TestKeyattack4TrustFileEncodings (idea T1): a byte-order mark, CRLF
// line ends and tabs. Each is read as meant, or is an error naming the
// file and line.
func TestKeyattack4TrustFileEncodings(t *testing.T) {
	t.Parallel()
	key := base64.StdEncoding.EncodeToString(testSigner(t, "w1").key.Public().(ed25519.PublicKey))
	for name, text := range map[string]string{
		"bom":  "\ufeffw1 " + key + "\n",
		"crlf": "# workers\r\nw1 " + key + "\r\n",
		"tabs": "w1\t\t" + key + "\t\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trusted_workers")
			writeFile(t, path, text)
			tf, err := NewTrustFile(path)
			if err != nil {
				if !strings.Contains(err.Error(), path+":1:") && !strings.Contains(err.Error(), path+":2:") {
					t.Fatalf("NewTrustFile = %v: an error must name the file and line", err)
				}
				return
			}
			if _, ok := tf.Key("w1"); !ok {
				t.Fatalf("w1 is not trusted, and no error said why")
			}
		})
	}
}

// TestKeyattack4TrustFileIsAFIFO (idea T3): trusted_workers is a named
// pipe (or any file that never ends). Reading it must end with an error
// naming it, not hang the lead's start without a deadline.
func TestKeyattack4TrustFileIsAFIFO(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	path := filepath.Join(t.TempDir(), "trusted_workers")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := NewTrustFile(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("NewTrustFile on a FIFO = %v, want an error naming it", err)
		}
	case <-time.After(3 * time.Second):
		// Free the reader so no goroutine is left behind.
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("NewTrustFile on a FIFO still reads after 3 s: a lead's start hangs on it")
	}
}

// TestKeyattack4WorkerRemovedFromTheTrustFile (idea T4): the user takes
// w1 out of trusted_workers while the lead runs (a worker found
// compromised). The lead re-reads the file only for a name it does not
// know, so w1's results are still taken until the lead restarts.
func TestKeyattack4WorkerRemovedFromTheTrustFile(t *testing.T) {
	t.Parallel()
	k1 := base64.StdEncoding.EncodeToString(testSigner(t, "w1").key.Public().(ed25519.PublicKey))
	k2 := base64.StdEncoding.EncodeToString(testSigner(t, "w2").key.Public().(ed25519.PublicKey))
	path := filepath.Join(t.TempDir(), "trusted_workers")
	writeFile(t, path, "w1 "+k1+"\nw2 "+k2+"\n")
	tf, err := NewTrustFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tf.Key("w1"); !ok {
		t.Fatal("w1 not trusted at first")
	}
	writeFile(t, path, "# w1 removed: compromised\nw2 "+k2+"\n")
	if _, ok := tf.Key("w1"); ok {
		t.Fatal("w1, removed from trusted_workers, is still trusted by the running lead")
	}
}

// TestKeyattack4JunkFloodBeforeTheResult (idea R2, against keyfix4's
// every-message-per-subject streams): 10,000 junk messages on
// results.f1 and cancel.f1 before the worker runs job f1. The worker
// reads every cancellation before it starts, the lead every stored
// message before the real result, one request each, and the lead reports
// each junk result. Storing the junk takes the attacker about 6 s; the
// lead must have the result within 20 s of the worker's start (it took
// 55 s under -race, with 10,000 reports: a denial that costs the
// attacker a tenth of what it costs the team).
func TestKeyattack4JunkFloodBeforeTheResult(t *testing.T) {
	// Not parallel, unlike the package's other tests: it is most of the
	// package's CPU (20,000 messages stored, then read), its 20 s bound
	// is for a process it has to itself, and beside it the other tests'
	// heartbeats (a third of the 1.5 s ack wait) come late.
	r := newRig(t)
	var reports atomic.Int64
	r.client.report = func(string, error) { reports.Add(1) }
	r.submit(r.job("f1"))
	const n = 10_000
	start := time.Now()
	for i := range n {
		for _, subj := range []string{r.client.s.n.results + ".f1", r.client.s.n.cancels + ".f1"} {
			if _, err := r.client.s.js.PublishAsync(subj, []byte("junk "+strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		if i%1000 == 999 {
			select {
			case <-r.client.s.js.PublishAsyncComplete():
			case <-time.After(60 * time.Second):
				t.Fatal("the junk was not stored in 60 s")
			}
		}
	}
	t.Logf("%d junk messages on each subject stored in %v", n, time.Since(start).Round(time.Millisecond))
	r.worker("w1", committing(nil))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start = time.Now()
	res, err := r.client.Wait(ctx, "f1", nil)
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("after %d junk results and cancellations, Wait = %+v, %v (%v)", n, res, err, time.Since(start))
	}
	t.Logf("the lead had f1's result %v after the worker started, with %d reports", time.Since(start).Round(time.Millisecond), reports.Load())
}

// TestKeyattack4ResultsStreamBackToOnePerSubject (idea R3, against
// keyfix4): a raw client updates PREFIX_RESULTS back to one message per
// subject (as an older lead does when it connects; the server drops all
// but the last of each) after the worker stored r4's result, then
// publishes junk on results.r4. Leads and workers set the shape only
// when they connect, so the signed result is gone, as after a purge: the
// lead must still get it or be told it was lost, not wait to its
// deadline.
func TestKeyattack4ResultsStreamBackToOnePerSubject(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.worker("w1", committing(nil))
	r.submit(r.job("r4"))
	st, err := r.client.s.js.Stream(t.Context(), r.client.s.n.resultStream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := st.GetLastMsgForSubject(t.Context(), r.client.s.n.results+".r4"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no result stored")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := st.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 1
	if _, err := r.client.s.js.UpdateStream(t.Context(), cfg); err != nil {
		t.Skipf("the server refuses the change: %v", err)
	}
	if _, err := r.client.s.js.Publish(t.Context(), r.client.s.n.results+".r4", []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if res, err := endedWithin5s(t, r, "r4"); err == nil && res.Status != StatusCompleted {
		t.Fatalf("r4 ended %+v", res)
	} else if err != nil {
		t.Fatalf("the stored result of r4 is gone and the lead waits on without a word: %v", err)
	}
}
