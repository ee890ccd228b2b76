package jsmail

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on the JetStream mailbox from outside (keyattack6,
// /work/notes/keyattack6-log.md): a client of the server's JetStream API
// beside an open inbox, as issue 42's premise allows. A test that got
// through is skipped unless KEYATTACK_ESCAPES=1, and fails then.

// TestKeyattack6ThiefPullsFromTheInboxConsumer (idea 28): the attacker
// neither deletes nor changes alice's consumer (the inbox's check finds
// it as made): it pulls from it, as any client may pull from a durable
// pull consumer by name, and acknowledges what it gets (the work-queue
// stream then drops it). Nothing lost: every message the lead sends must
// reach alice, or the loss be reported. Held by the report (fix42b): the
// inbox counts the consumer's deliveries it never had (gaps.go), and the
// reports add up to at least what alice missed.
func TestKeyattack6ThiefPullsFromTheInboxConsumer(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	f.tr.tailGrace = 300 * time.Millisecond // before any inbox reads it
	in := f.open(t, "alice")
	next(t, in, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}), "the first message")
	s, err := rawJS(t, f).Stream(t.Context(), f.tr.names.stream)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Consumer(t.Context(), consumerName("alice"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var stolen atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			batch, err := c.Fetch(8, jetstream.FetchMaxWait(200*time.Millisecond))
			if err != nil {
				continue
			}
			for m := range batch.Messages() {
				if m.Ack() == nil {
					stolen.Add(1)
				}
			}
		}
	}()
	time.Sleep(100 * time.Millisecond) // the thief's pull is waiting
	const n = 20
	sent := map[string]bool{}
	for i := range n {
		m := f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "m" + itoa(i)})
		sent[m.ID] = true
		time.Sleep(10 * time.Millisecond)
	}
	// Every delivery the thief took must be reported, the last ones once
	// the server's count of deliveries has had time to reach alice.
	missedIn := func() int {
		total := 0
		for _, p := range f.pr.all() {
			var k int
			if _, err := fmt.Sscanf(p.Reason, "%d deliveries of the inbox's consumer "+consumerName("alice"), &k); err == nil && p.Agent == "alice" {
				total += k
			}
		}
		return total
	}
	got := map[string]bool{}
	for end := time.Now().Add(10 * time.Second); len(got)+missedIn() < n; {
		if time.Now().After(end) {
			cancel()
			<-done
			t.Fatalf("%d of the lead's %d messages never reached alice (the thief pulling from her consumer acknowledged %d); reported missing: %d; reports: %v",
				n-len(got), n, stolen.Load(), missedIn(), f.pr.all())
		}
		rctx, rcancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		msgs, _ := in.Receive(rctx)
		rcancel()
		var acked []string
		for _, m := range msgs {
			got[m.ID] = true
			acked = append(acked, m.ID)
		}
		if len(acked) > 0 {
			_ = in.Ack(t.Context(), acked...)
		}
	}
	cancel()
	<-done
	missing := n - len(got)
	t.Logf("alice missed %d of %d (the thief acknowledged %d); reported: %d deliveries", missing, n, stolen.Load(), missedIn())
}
