package remote

import (
	"context"
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
