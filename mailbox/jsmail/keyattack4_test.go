package jsmail

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on session 8's whole-config live check (keyfix3) from outside
// (keyattack4, /work/notes/keyattack4-log.md): a client of the server's
// JetStream API under an open inbox. Each test asserts the promise ("an
// open inbox keeps hearing or says it cannot"; "nothing is dropped
// silently"). Its attacks on the inbox's consumer (D1 headers only, the
// consumer stolen, its filter moved) have no target since the owner
// reads by its own cursor (issue 42, keyattack7).

// TestKeyattack4StreamFieldsUnderALiveInbox (idea D4): stream settings
// the check does not list, changed under alice's open inbox: persisting
// asynchronously (a server restart may lose what it acknowledged, as
// memory storage would, which the check refuses), consumer limits below
// what Open makes, one consumer at most. The inbox must keep hearing
// (and, for the persistence, say the stream is not as it must be) or
// fail saying so.
func TestKeyattack4StreamFieldsUnderALiveInbox(t *testing.T) {
	for name, c := range map[string]struct {
		change func(*jetstream.StreamConfig)
		report bool // the change must be reported, even if alice still hears
	}{
		"async persistence": {func(c *jetstream.StreamConfig) { c.PersistMode = jetstream.AsyncPersistMode }, true},
		"consumer limits":   {func(c *jetstream.StreamConfig) { c.ConsumerLimits = jetstream.StreamConsumerLimits{MaxAckPending: 1} }, false},
		"max consumers 1":   {func(c *jetstream.StreamConfig) { c.MaxConsumers = 1 }, false},
		"max msg size 64":   {func(c *jetstream.StreamConfig) { c.MaxMsgSize = 64 }, false},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
			in := f.open(t, "alice")
			next(t, in, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}), "the first message")
			info, err := f.tr.stream.Info(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			cfg := info.Config
			c.change(&cfg)
			if _, err := rawJS(t, f).UpdateStream(t.Context(), cfg); err != nil {
				t.Skipf("the server refuses the change: %v", err)
			}
			m, err := f.tr.Append(t.Context(), mailbox.Message{From: "team-lead", To: "alice", Text: "after " + name})
			if err != nil {
				t.Logf("the lead's Append fails, the sender is told: %v", err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			got, rerr := in.Receive(ctx)
			switch {
			case errors.Is(rerr, ErrDeaf):
				return // says it cannot
			case rerr != nil && err == nil:
				t.Fatalf("alice heard nothing for 5 s after the stream's %s (%v); reports %v", name, rerr, f.pr.all())
			case rerr == nil && err == nil && got[0].ID != m.ID:
				t.Fatalf("alice got %+v", got[0])
			}
			if c.report {
				time.Sleep(500 * time.Millisecond) // five checks
				for _, p := range f.pr.all() {
					if strings.Contains(p.Reason, f.tr.names.stream) {
						return
					}
				}
				t.Fatalf("the stream now persists asynchronously and nothing said so; reports %v", f.pr.all())
			}
		})
	}
}

// TestKeyattack4DeadLetterFlood (idea F1): 2,000 junk messages on
// alice's subject, then the lead's. Each junk message is dead-lettered
// and reported; the lead's arrives within 30 s.
func TestKeyattack4DeadLetterFlood(t *testing.T) {
	f := newFixture(t, Config{}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	js := rawJS(t, f)
	const n = 2000
	start := time.Now()
	for i := range n {
		if _, err := js.PublishAsync(f.tr.inbox("alice"), []byte("junk "+itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(30 * time.Second):
		t.Fatal("the junk was not stored in 30 s")
	}
	m := f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "after the flood"})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got, err := in.Receive(ctx)
	if err != nil || got[0].ID != m.ID {
		t.Fatalf("after %d junk messages alice got %v, %v", n, ids(got), err)
	}
	t.Logf("the lead's message came %v after the flood began", time.Since(start).Round(time.Millisecond))
	if got := len(f.pr.wait(t, n)); got != n {
		t.Fatalf("%d junk messages, %d reports", n, got)
	}
}
