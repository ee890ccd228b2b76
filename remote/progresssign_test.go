package remote

import (
	"context"
	"crypto/ed25519"
	"strings"
	"testing"
	"time"
)

// TestSignedProgressReachesTheLead: a trusted worker's signed progress
// reaches Wait's callback with its figures, while an unsigned event is
// dropped (TestKeyattack3ForgedProgressReachesTheLead).
func TestSignedProgressReachesTheLead(t *testing.T) {
	// Not parallel: a job waits on a worker through heartbeats (TestMain).
	r := newRig(t)
	r.worker("w1", func(ctx context.Context, job *Job, run *Run, dir string, progress func(Progress)) (Outcome, error) {
		tick := time.NewTicker(20 * time.Millisecond) // core NATS: the lead may subscribe after the first
		defer tick.Stop()
		for {
			progress(Progress{Tool: "Write", ToolUses: 2, OutputTokens: 7})
			select {
			case <-ctx.Done():
				return Outcome{}, ctx.Err()
			case <-tick.C:
			}
		}
	})
	r.submit(r.job("s1"))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got := make(chan Progress, 1)
	go func() {
		_, _ = r.client.Wait(ctx, "s1", func(p Progress) {
			if p.Phase == "running" { // the worker's first event
				return
			}
			select {
			case got <- p:
			default:
			}
		})
	}()
	select {
	case p := <-got:
		if p.JobID != "s1" || p.Worker != "w1" || p.ToolUses != 2 || p.OutputTokens != 7 {
			t.Fatalf("progress = %+v", p)
		}
	case <-ctx.Done():
		t.Fatal("no signed progress reached the lead")
	}
	if err := r.client.Cancel(t.Context(), "s1"); err != nil {
		t.Fatal(err)
	}
	if res := r.wait("s1"); res.Status != StatusCancelled {
		t.Fatalf("result = %+v", res)
	}
}

// TestProgressNamesItsSigner: an event signed by one trusted worker that
// names another (keyattack4 P3) is refused, and so is one whose signer is
// not the worker that said it runs the job.
func TestProgressNamesItsSigner(t *testing.T) {
	t.Parallel()
	w1, w3 := testSigner(t, "w1"), testSigner(t, "w3")
	ring := NewKeyring()
	for _, s := range []*Signer{w1, w3} {
		if err := ring.Add(s.Name(), s.key.Public().(ed25519.PublicKey)); err != nil {
			t.Fatal(err)
		}
	}
	sig := []byte("job b's signature")
	payload := mustJSON(signedProgress{Progress: Progress{JobID: "b", Worker: "w1", OutputTokens: 1e12}, JobSignature: sig})
	relabelled := mustJSON(Envelope{Key: "w3", Payload: payload, Signature: ed25519.Sign(w3.key, append([]byte(progressContext), payload...))})
	if _, err := openProgress(ring, relabelled, "b", sig); err == nil || !strings.Contains(err.Error(), `names worker "w1" but is signed by "w3"`) {
		t.Fatalf("w3's event naming w1 = %v, want refused", err)
	}
	runner := progressFrom{nonce: "0123abcd"}
	asked := 0
	runner.askAgain = func() { asked++ }
	own, err := openProgress(ring, w3.SealProgress(Progress{JobID: "b", OutputTokens: 5}, sig), "b", sig)
	if err != nil || own.Worker != "w3" {
		t.Fatalf("w3's own event = %+v, %v", own, err)
	}
	if _, err := runner.take("b", own); err == nil {
		t.Fatal("an event taken before any worker said it runs the job")
	}
	// A "running" that answers no question of this Wait's proves nothing
	// (it may be replayed): the Wait asks.
	if _, err := runner.take("b", Progress{JobID: "b", Worker: "w1", Phase: "running"}); err == nil || asked != 1 {
		t.Fatalf("an unasked running before the answer = %v (asked %d times), want refused and a question", err, asked)
	}
	if _, err := runner.take("b", Progress{JobID: "b", Worker: "w1", Phase: runningPhase(1, "99999999")}); err == nil {
		t.Fatal("an answer to another question taken")
	}
	if p, err := runner.take("b", Progress{JobID: "b", Worker: "w1", Phase: runningPhase(1, "0123abcd")}); err != nil || p.Phase != "running" {
		t.Fatalf("w1's answer = %+v, %v", p, err)
	}
	if _, err := runner.take("b", own); err == nil || !strings.Contains(err.Error(), `worker "w1" runs it`) {
		t.Fatalf("w3's event while w1 runs b = %v", err)
	}
	if _, err := runner.take("b", Progress{JobID: "b", Worker: "w1", OutputTokens: 3}); err != nil {
		t.Fatal(err)
	}
	// The job handed to w3 (its second delivery): w3 runs it now, the
	// lead shows the phase as "running", and w1's "running" of the first
	// delivery, replayed, takes it back from no one.
	p, err := runner.take("b", Progress{JobID: "b", Worker: "w3", Phase: runningPhase(2, "")})
	if err != nil || p.Phase != "running" {
		t.Fatalf("w3's running of delivery 2 = %+v, %v", p, err)
	}
	if _, err := runner.take("b", Progress{JobID: "b", Worker: "w1", Phase: "running"}); err == nil || !strings.Contains(err.Error(), "delivery 1") {
		t.Fatalf("w1's running of delivery 1 after w3's of delivery 2 = %v, want refused", err)
	}
	if _, err := runner.take("b", own); err != nil {
		t.Fatalf("w3's event after w1's replayed running = %v", err)
	}
	// w1's answer to this Wait's own question, for the delivery it ran
	// before, replayed (keyattack6): w3 stays the runner.
	if _, err := runner.take("b", Progress{JobID: "b", Worker: "w1", Phase: runningPhase(1, "0123abcd")}); err == nil {
		t.Fatal("w1's answer of delivery 1, replayed after w3 ran delivery 2, taken")
	}
	if _, err := runner.take("b", Progress{JobID: "b", Worker: "w1", OutputTokens: 4}); err == nil {
		t.Fatal("w1's event taken after its replayed answer")
	}
	if _, err := runner.take("b", own); err != nil {
		t.Fatalf("w3's event after w1's replayed answer = %v", err)
	}
	for _, phase := range []string{"running (delivery 1)", "running (delivery 02)", "running (delivery 3) ", "running (delivery x)",
		"running (delivery 0, asked 0123abcd)", "running (delivery 2, asked 0123ABCD)", "running (delivery 2, asked 01)", "running (delivery 2, asked )"} {
		if _, _, ok := runningDelivery(phase); ok {
			t.Errorf("runningDelivery(%q) read as a running phase", phase)
		}
	}
}
