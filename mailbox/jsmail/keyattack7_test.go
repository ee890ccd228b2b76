package jsmail

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go/jetstream"
)

// Thieves (issue 42; keyattack6 and keyattack7): any client with the
// team's credentials may use the server's JetStream API. It pulls from a
// consumer on a member's inbox subject and acknowledges what it gets, or
// tries to delete or purge the stored messages. Nothing it does may take
// a message from its owner: the owner reads the stream by its own cursor
// (package doc, "Reading by the owner's cursor").

func itoa(i int) string { return strconv.Itoa(i) }

// thiefConsumer is what a thief pulls from: the inbox's durable consumer
// if there is one (an earlier version read through "inbox-AGENT"),
// else a durable one it makes on the inbox's subject.
func thiefConsumer(t *testing.T, f *fixture, agent string) (jetstream.Stream, jetstream.Consumer) {
	t.Helper()
	s, err := rawJS(t, f).Stream(t.Context(), f.tr.names.stream)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.Consumer(t.Context(), "inbox-"+agent); err == nil {
		return s, c
	}
	c, err := s.CreateOrUpdateConsumer(t.Context(), jetstream.ConsumerConfig{
		Durable: "thief", FilterSubject: f.tr.inbox(agent), AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// steal pulls from c and acknowledges all it gets until ctx ends; the
// returned wait gives the count.
func steal(ctx context.Context, c jetstream.Consumer) (wait func() int) {
	var stolen atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			batch, err := c.Fetch(8, jetstream.FetchMaxWait(200*time.Millisecond))
			if err != nil {
				continue
			}
			for m := range batch.Messages() {
				if m.DoubleAck(ctx) == nil {
					stolen.Add(1)
				}
			}
		}
	})
	return func() int { wg.Wait(); return int(stolen.Load()) }
}

// gather receives until every id in want came, or fails naming what did
// not; anything twice fails too.
func gather(t *testing.T, in mailbox.Inbox, want map[string]bool, stolen int) {
	t.Helper()
	got := map[string]int{}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	for len(got) < len(want) {
		msgs, err := in.Receive(ctx)
		if err != nil {
			var missing []string
			for id := range want {
				if got[id] == 0 {
					missing = append(missing, id)
				}
			}
			t.Fatalf("%d of %d messages never reached their owner (the thief acknowledged %d): %v; missing %v", len(missing), len(want), stolen, err, missing)
		}
		var acked []string
		for _, m := range msgs {
			if got[m.ID]++; got[m.ID] > 1 || !want[m.ID] {
				t.Fatalf("message %s (%q) came %d times, or was never sent", m.ID, m.Text, got[m.ID])
			}
			acked = append(acked, m.ID)
		}
		if err := in.Ack(t.Context(), acked...); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKeyattack7ThiefOnAClosedInbox: alice's inbox is closed (her
// process ended); the thief pulls her five new messages and acknowledges
// them. Her inbox opened again gets all five (on main: none, and no
// report: the consumer made anew counts its deliveries from 1).
func TestKeyattack7ThiefOnAClosedInbox(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	gather(t, in, map[string]bool{f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}).ID: true}, 0)
	in.Close()
	want := map[string]bool{}
	for i := range 5 {
		want[f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "m" + itoa(i)}).ID] = true
	}
	_, c := thiefConsumer(t, f, "alice")
	batch, err := c.Fetch(5, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	stolen := 0
	for m := range batch.Messages() {
		if m.DoubleAck(t.Context()) == nil {
			stolen++
		}
	}
	gather(t, f.open(t, "alice"), want, stolen)
}

// TestKeyattack7ThiefTakesTheLastBeforeClose: the thief pulls beside
// alice's open inbox while the lead sends; alice closes before she reads
// them and the thief deletes what it pulled from (on main the inbox's
// own consumer, whose count of deliveries then starts again). Her inbox
// opened again gets every message, once.
func TestKeyattack7ThiefTakesTheLastBeforeClose(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	gather(t, in, map[string]bool{f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}).ID: true}, 0)
	s, c := thiefConsumer(t, f, "alice")
	ctx, cancel := context.WithCancel(t.Context())
	wait := steal(ctx, c)
	want := map[string]bool{}
	for i := range 10 {
		want[f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "m" + itoa(i)}).ID] = true
	}
	in.Close()
	cancel()
	stolen := wait()
	_ = s.DeleteConsumer(t.Context(), c.CachedInfo().Name)
	gather(t, f.open(t, "alice"), want, stolen)
}

// TestKeyattack7ThiefBesideALiveInbox (keyattack6 idea 28): the thief
// pulls and acknowledges all the while the lead sends 20 messages to
// alice's open inbox. All 20 reach her, once (on main 9 of 20 were lost,
// reported).
func TestKeyattack7ThiefBesideALiveInbox(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	gather(t, in, map[string]bool{f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}).ID: true}, 0)
	_, c := thiefConsumer(t, f, "alice")
	ctx, cancel := context.WithCancel(t.Context())
	wait := steal(ctx, c)
	want := map[string]bool{}
	for i := range 20 {
		want[f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "m" + itoa(i)}).ID] = true
	}
	gather(t, in, want, -1)
	cancel()
	t.Logf("the thief acknowledged %d; alice got all", wait())
}

// TestKeyattack7DeleteAndPurgeRefused: the thief deletes a stored
// message of alice's and purges her subject and the stream: the stream
// refuses each, and alice gets her mail. Then it makes the stream anew
// allowing them: alice's open inbox finds the stream's shape altered and
// says it cannot hear (ErrDeaf), rather than read from a stream whose
// mail anyone may take.
func TestKeyattack7DeleteAndPurgeRefused(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	want := map[string]bool{}
	for i := range 2 {
		want[f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "m" + itoa(i)}).ID] = true
	}
	s, err := rawJS(t, f).Stream(t.Context(), f.tr.names.stream)
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.GetLastMsgForSubject(t.Context(), f.tr.inbox("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMsg(t.Context(), last.Sequence); err == nil {
		t.Errorf("the stream let a client delete alice's message %d", last.Sequence)
	}
	if err := s.SecureDeleteMsg(t.Context(), last.Sequence-1); err == nil {
		t.Errorf("the stream let a client erase alice's message %d", last.Sequence-1)
	}
	if err := s.Purge(t.Context(), jetstream.WithPurgeSubject(f.tr.inbox("alice"))); err == nil {
		t.Errorf("the stream let a client purge alice's inbox")
	}
	if err := s.Purge(t.Context()); err == nil {
		t.Errorf("the stream let a client purge it")
	}
	in := f.open(t, "alice")
	gather(t, in, want, 0)

	// The server refuses to lift the denials; the thief deletes the
	// stream (nothing prevents that: reported by the inbox) and makes it
	// anew allowing deletes and purges. The inbox must not read from it.
	cfg := s.CachedInfo().Config
	cfg.DenyDelete, cfg.DenyPurge = false, false
	if _, err := rawJS(t, f).UpdateStream(t.Context(), cfg); err == nil {
		t.Fatal("the server let a client lift the stream's denial of deletes and purges")
	}
	release := holdRestores(t, f)
	if err := rawJS(t, f).DeleteStream(t.Context(), f.tr.names.stream); err != nil {
		t.Fatal(err)
	}
	if _, err := rawJS(t, f).CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	release()
	refusedAndFreed(t, f, in, "allows deleting (true) or purging (true)")
}
