package jsmail

import (
	"context"
	"os"
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
// reach alice, or the loss be reported.
func TestKeyattack6ThiefPullsFromTheInboxConsumer(t *testing.T) {
	if os.Getenv("KEYATTACK_ESCAPES") != "1" {
		t.Skip("known escape (keyattack6-log.md): a raw client pulls from an inbox's durable consumer; KEYATTACK_ESCAPES=1 runs it")
	}
	f, in, s, _ := heardOnce(t)
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
	got := map[string]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		rctx, rcancel := context.WithTimeout(t.Context(), time.Second)
		msgs, _ := in.Receive(rctx)
		rcancel()
		for _, m := range msgs {
			got[m.ID] = true
		}
		var acked []string
		for _, m := range msgs {
			acked = append(acked, m.ID)
		}
		if len(acked) > 0 {
			_ = in.Ack(t.Context(), acked...)
		}
	}
	cancel()
	<-done
	if missing := n - len(got); missing > 0 {
		t.Fatalf("%d of the lead's %d messages never reached alice (the thief pulling from her consumer acknowledged %d); reports: %v", missing, n, stolen.Load(), f.pr.all())
	}
}
