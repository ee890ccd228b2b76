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
	var runner progressFrom
	own, err := openProgress(ring, w3.SealProgress(Progress{JobID: "b", OutputTokens: 5}, sig), "b", sig)
	if err != nil || own.Worker != "w3" {
		t.Fatalf("w3's own event = %+v, %v", own, err)
	}
	if err := runner.take("b", own); err == nil {
		t.Fatal("an event taken before any worker said it runs the job")
	}
	if err := runner.take("b", Progress{JobID: "b", Worker: "w1", Phase: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := runner.take("b", own); err == nil || !strings.Contains(err.Error(), `worker "w1" runs it`) {
		t.Fatalf("w3's event while w1 runs b = %v", err)
	}
	if err := runner.take("b", Progress{JobID: "b", Worker: "w1", OutputTokens: 3}); err != nil {
		t.Fatal(err)
	}
}
