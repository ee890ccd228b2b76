package remote

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on keyfix5b's remote fixes (progress from the job's worker,
// trust files re-read on change, batched reads, streams' shape checked at
// every read) from outside (keyattack5, /work/notes/keyattack5-log.md): a
// NATS client with the run of the queue's subjects and the JetStream API
// (issue 42's premise). Each test asserts the promise; since keyfix6b
// every attack here fails, so none is gated.

// TestKeyattack5CancelDroppedBeforeTheJobRuns (idea C7): the lead
// cancels job x while it waits in the queue (TaskStop before any worker
// took it); the attacker drops the stored cancellation before a worker
// comes — by purging cancel.x, or by setting PREFIX_CANCELS to one
// message per subject, publishing junk on cancel.x and putting the shape
// back at once (the check at each read then finds nothing to report).
// "TaskStop stops a job wherever it is": the worker must not run it.
func TestKeyattack5CancelDroppedBeforeTheJobRuns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		drop func(t *testing.T, r *rig, st jetstream.Stream, subj string)
	}{
		{"purge", func(t *testing.T, r *rig, st jetstream.Stream, subj string) {
			if err := st.Purge(t.Context(), jetstream.WithPurgeSubject(subj)); err != nil {
				t.Fatal(err)
			}
		}},
		{"one per subject, junk, shape put back", func(t *testing.T, r *rig, st jetstream.Stream, subj string) {
			cfg := st.CachedInfo().Config
			was := cfg.MaxMsgsPerSubject
			cfg.MaxMsgsPerSubject = 1
			if _, err := r.client.s.js.UpdateStream(t.Context(), cfg); err != nil {
				t.Skipf("the server refuses the change: %v", err)
			}
			if _, err := r.client.s.js.Publish(t.Context(), subj, []byte("junk")); err != nil {
				t.Fatal(err)
			}
			cfg.MaxMsgsPerSubject = was
			if _, err := r.client.s.js.UpdateStream(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			r.submit(r.job("x")) // no worker yet: x waits in the queue
			if err := r.client.Cancel(t.Context(), "x"); err != nil {
				t.Fatal(err)
			}
			st, err := r.client.s.js.Stream(t.Context(), r.client.s.n.cancelStream)
			if err != nil {
				t.Fatal(err)
			}
			c.drop(t, r, st, r.client.s.n.cancels+".x")
			var calls atomic.Int32
			r.worker("w1", committing(&calls))
			res := r.wait("x")
			if calls.Load() != 0 || res.Status == StatusCompleted {
				t.Fatalf("the lead cancelled x before any worker took it; after the stored cancellation was dropped, w1 ran it %d time(s) and x ended %s (%s)", calls.Load(), res.Status, res.Text)
			}
		})
	}
}

// TestKeyattack5TrustFileRewrittenInPlace (idea T5): the user rotates w1's
// key (w1's old key leaked) by rewriting trusted_workers in place with a
// line of the same length; the file's size is unchanged and its mtime
// equals the one the lead read (restored here with Chtimes; the kernel's
// coarse file clock gives the same mtime to two writes a few ms apart). A
// running lead must not keep trusting the leaked key.
func TestKeyattack5TrustFileRewrittenInPlace(t *testing.T) {
	t.Parallel()
	k1 := base64.StdEncoding.EncodeToString(testSigner(t, "w1").key.Public().(ed25519.PublicKey))
	k3 := base64.StdEncoding.EncodeToString(testSigner(t, "w3").key.Public().(ed25519.PublicKey))
	path := filepath.Join(t.TempDir(), "trusted_workers")
	writeFile(t, path, "w1 "+k1+"\n")
	tf, err := NewTrustFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := tf.Key("w1"); !ok || base64.StdEncoding.EncodeToString(k) != k1 {
		t.Fatal("w1's first key not trusted at first")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0) // in place: same inode
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("w1 " + k3 + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if k, ok := tf.Key("w1"); ok && base64.StdEncoding.EncodeToString(k) == k1 {
		t.Fatal("w1's leaked key, replaced in trusted_workers (in place, same size and mtime), is still trusted by the running lead")
	}
}

// TestKeyattack5TrustFileGone (idea T4): the user removes trusted_workers
// (or makes it unreadable) to stop trusting every worker at once. A
// running lead must not keep trusting w1 from what it read before.
func TestKeyattack5TrustFileGone(t *testing.T) {
	t.Parallel()
	k1 := base64.StdEncoding.EncodeToString(testSigner(t, "w1").key.Public().(ed25519.PublicKey))
	for _, c := range []struct {
		name string
		do   func(path string) error
	}{
		{"removed", os.Remove},
		{"made empty", func(path string) error { return os.WriteFile(path, nil, 0o600) }},
		{"grown past 1 MiB", func(path string) error {
			return os.WriteFile(path, append([]byte("w1 "+k1+"\n"), make([]byte, 2<<20)...), 0o600)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trusted_workers")
			writeFile(t, path, "w1 "+k1+"\n")
			tf, err := NewTrustFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := tf.Key("w1"); !ok {
				t.Fatal("w1 not trusted at first")
			}
			time.Sleep(10 * time.Millisecond)
			if err := c.do(path); err != nil {
				t.Fatal(err)
			}
			if _, ok := tf.Key("w1"); ok {
				t.Fatalf("trusted_workers %s: w1 is still trusted by the running lead", c.name)
			}
			if c.name != "made empty" {
				// The refusal says why, naming the file.
				if err := tf.Problem(); err == nil || !strings.Contains(err.Error(), path) {
					t.Fatalf("trusted_workers %s: Problem() = %v, want why, naming %s", c.name, err, path)
				}
			}
		})
	}
}

// TestKeyattack5ResultsStreamRemade (idea R2): after w1 stored r5's
// result, the attacker deletes PREFIX_RESULTS and makes it again with the
// same shape (the shape check finds nothing wrong). The lead, connected
// since before the result was published, must still get it.
func TestKeyattack5ResultsStreamRemade(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.worker("w1", committing(nil))
	r.submit(r.job("r5"))
	st, err := r.client.s.js.Stream(t.Context(), r.client.s.n.resultStream)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := st.GetLastMsgForSubject(t.Context(), r.client.s.n.results+".r5"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no result stored")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := st.CachedInfo().Config
	if err := r.client.s.js.DeleteStream(t.Context(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.s.js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if res, err := endedWithin5s(t, r, "r5"); err != nil || res.Status != StatusCompleted {
		t.Fatalf("after the results stream was deleted and made again, r5's Wait = %+v, %v", res, err)
	}
}

// TestKeyattack5RunningReplayedFromAnEarlierWorker (idea P2): w2 took job
// b, reported progress and was stopped (it gives the job back), so w1
// runs b now. The attacker, who heard w2's signed "running" and a token
// event of b on the wire, replays them right after each of w1's
// heartbeats. Both are genuine, signed by a trusted worker for this very
// job, but w2 no longer runs it: the lead's Wait must take b's events
// from w1 only (the doc: events only from the worker that runs the job).
func TestKeyattack5RunningReplayedFromAnEarlierWorker(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	started := make(chan string, 2)
	stop2 := r.worker("w2", counting(started))
	var running, tokens atomic.Pointer[[]byte]
	sub, err := r.client.nc.Subscribe(r.client.s.n.progress+".b", func(m *nats.Msg) {
		p, err := openProgress(r.client.workers, m.Data, "b", r.client.sigs["b"])
		if err != nil || p.Worker != "w2" {
			return
		}
		data := append([]byte(nil), m.Data...)
		if p.Phase == "running" {
			running.Store(&data)
		} else if p.OutputTokens > 0 {
			tokens.Store(&data)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r.submit(r.job("b"))
	startedWithin(t, started)
	deadline := time.Now().Add(10 * time.Second)
	for running.Load() == nil || tokens.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("w2's running and token events of b not heard on the wire")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = sub.Unsubscribe()
	stop2() // w2 gives b back
	r.worker("w1", counting(started))
	startedWithin(t, started)
	seen := progressSeen(t, r, "b", 3*time.Second, func() {
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", *running.Load())
		_ = r.client.nc.Publish(r.client.s.n.progress+".b", *tokens.Load())
	})
	var fromW1 int
	for _, p := range seen {
		if p.Worker != "w1" {
			t.Fatalf("the lead's Wait on b (run by w1 now) took w2's replayed event %+v (%d of w1's taken)", p, fromW1)
		}
		fromW1++
	}
	if fromW1 == 0 {
		t.Fatal("the lead took none of w1's events of b")
	}
}

// TestKeyattack5TrustFileLinkRetargeted (idea T2): trusted_workers is a
// link the user points at another file (a second profile's list) with
// the same size and mtime as the first: the running lead reads the new
// target's keys.
func TestKeyattack5TrustFileLinkRetargeted(t *testing.T) {
	t.Parallel()
	k1 := base64.StdEncoding.EncodeToString(testSigner(t, "w1").key.Public().(ed25519.PublicKey))
	k3 := base64.StdEncoding.EncodeToString(testSigner(t, "w3").key.Public().(ed25519.PublicKey))
	dir := t.TempDir()
	a, b, path := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "trusted_workers")
	writeFile(t, a, "w1 "+k1+"\n")
	writeFile(t, b, "w1 "+k3+"\n")
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(b, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, path); err != nil {
		t.Fatal(err)
	}
	tf, err := NewTrustFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := tf.Key("w1"); !ok || base64.StdEncoding.EncodeToString(k) != k1 {
		t.Fatal("w1's first key not trusted at first")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, path); err != nil {
		t.Fatal(err)
	}
	if k, ok := tf.Key("w1"); !ok || base64.StdEncoding.EncodeToString(k) != k3 {
		t.Fatalf("trusted_workers linked anew to a list naming w1 with another key: the running lead has w1 = %v (trusted %v)", k, ok)
	}
}
