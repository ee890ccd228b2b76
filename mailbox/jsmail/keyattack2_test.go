package jsmail

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on session 7's replay defence (keyattack2): the freshness check
// rests on the server's duplicate record of the stream, which a client of
// the server's API can wipe. Each test asserts the refusal; one that got
// through was skipped unless KEYATTACK_ESCAPES=1 until session 8 (see
// /work/notes/keyattack2-log.md); all run now.

// rawJS is a JetStream client of the attacker's own.
func rawJS(t *testing.T, f *fixture) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(connect(t, f.srv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// respawned closes alice's inbox and opens it anew (a respawned alice):
// what it remembered is gone.
func respawned(t *testing.T, f *fixture, in mailbox.Inbox) mailbox.Inbox {
	t.Helper()
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	return f.open(t, "alice")
}

// TestKeyattack2ReplayAfterTheStreamIsMadeAnew (idea 1): alice takes the
// lead's shutdown request; the attacker deletes the team's stream and
// makes it again with the very same configuration (so the duplicate
// window check passes), which empties the server's duplicate record.
// alice is respawned, and the captured request, within the 50 s
// freshness window, is published again with its id. It must not reach
// her.
func TestKeyattack2ReplayAfterTheStreamIsMadeAnew(t *testing.T) {
	f, in, w := takenShutdown(t)
	remakeStream(t, f)
	again := respawned(t, f, in)
	replay(t, f, w, true)
	next(t, again, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "marker"}), "a replay after the stream was made anew")
}

// TestKeyattack2ReplayAfterAServerRestart (idea 2, the package doc's own
// exception): the server restarts after alice took the request (the
// work queue deleted it, so the rebuilt duplicate record lacks its id);
// alice is respawned and the request is replayed within the window.
func TestKeyattack2ReplayAfterAServerRestart(t *testing.T) {
	f, in, w := takenShutdown(t)
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	f.srv.Restart()
	again := f.open(t, "alice")
	replay(t, f, w, true)
	next(t, again, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "marker"}), "a replay after a server restart")
}

// TestKeyattack2ReplayAfterAPurge (idea 3): a purge of the stream
// (deleting every stored message) is refused by the stream (issue 42),
// and the replay to a respawned alice is dropped.
func TestKeyattack2ReplayAfterAPurge(t *testing.T) {
	f, in, w := takenShutdown(t)
	s, err := rawJS(t, f).Stream(t.Context(), f.tr.names.stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(t.Context()); err == nil {
		t.Fatal("the stream let a client purge it")
	}
	again := respawned(t, f, in)
	replay(t, f, w, true)
	next(t, again, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "marker"}), "a replay after a purge")
}

// TestKeyattack2AppendWithTheStreamDeleted (idea 4): the attacker
// deletes the team's stream; the lead's next Append fails with an error
// naming the recipient: nothing is said sent that was not stored.
func TestKeyattack2AppendWithTheStreamDeleted(t *testing.T) {
	f := newFixture(t, Config{}, []string{"team-lead"}, "alice")
	if err := rawJS(t, f).DeleteStream(t.Context(), f.tr.names.stream); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tr.Append(t.Context(), mailbox.Message{From: "team-lead", To: "alice", Text: "into nothing"}); err == nil ||
		!strings.Contains(err.Error(), "alice") {
		t.Fatalf("Append with the stream deleted: %v, want an error naming the recipient", err)
	}
}

// TestKeyattack2StreamMadeAnewWithAShortWindowUnderALiveInbox (idea 5):
// the attacker deletes the stream under alice's open inbox and makes it
// again with a duplicate window of 1 s. The inbox, making its consumer
// anew, must refuse the shortened window and say so, not read on a
// stream that no longer protects it from replays. (The inbox would make
// the stream anew itself at once; the test holds it until the
// attacker's stream is in place.)
func TestKeyattack2StreamMadeAnewWithAShortWindowUnderALiveInbox(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	next(t, in, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}), "the first message")
	js := rawJS(t, f)
	info, err := f.tr.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	release := holdRestores(t, f)
	if err := js.DeleteStream(t.Context(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	cfg.Duplicates = time.Second
	if _, err := js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	release()
	refusedAndFreed(t, f, in, "keeps message ids for duplicates 1s")
}

// refusedAndFreed: alice's open inbox reports a problem saying why (and
// that it gave up its lease), its Receive returns ErrDeaf, and a
// respawned alice is not told the inbox is busy.
func refusedAndFreed(t *testing.T, f *fixture, in mailbox.Inbox, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	reported := func() bool {
		for _, p := range f.pr.all() {
			if strings.Contains(p.Reason, why) && strings.Contains(p.Reason, "gave up its lease") {
				return true
			}
		}
		return false
	}
	for !reported() {
		select {
		case <-f.pr.more:
		case <-ctx.Done():
			t.Fatalf("alice's open inbox never reported %q and gave up; reports %v", why, f.pr.all())
		}
	}
	if _, err := in.Receive(ctx); !errors.Is(err, ErrDeaf) || !strings.Contains(err.Error(), why) {
		t.Fatalf("Receive on the deaf inbox: %v, want ErrDeaf saying %q", err, why)
	}
	again, err := f.tr.OpenInbox(t.Context(), "alice")
	if errors.Is(err, mailbox.ErrReaderBusy) {
		t.Fatalf("a respawned alice: %v: the deaf inbox kept its lease", err)
	}
	if err == nil {
		again.Close()
	}
}

// TestKeyattack2OversizedAndMalformedMessages (ideas 9, 10): messages
// that do not verify — one nearly as large as the stream allows (so the
// dead letter, with its reason headers, may not fit), one with a
// Cohort-Sent that is no time, one with an empty Cohort-Key, one with a
// 60 KiB signature (the server refuses headers over 64 KiB itself) — are each refused with a report; the lead's next
// message is the next alice gets.
func TestKeyattack2OversizedAndMalformedMessages(t *testing.T) {
	f := newFixture(t, Config{}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	js := rawJS(t, f)
	good := natsMsg(t, f, "alice", mailbox.Message{From: "team-lead", To: "alice", Text: "hi", ID: mailbox.NewID(time.Now()), Timestamp: time.Now().UTC()})
	pub := func(what string, change func(m *nats.Msg)) {
		t.Helper()
		m := nats.NewMsg(good.Subject)
		m.Data = append([]byte(nil), good.Data...)
		for k, v := range good.Header {
			m.Header[k] = append([]string(nil), v...)
		}
		m.Header.Set(jetstream.MsgIDHeader, mailbox.NewID(time.Now()))
		change(m)
		if _, err := js.PublishMsg(t.Context(), m); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	huge := (1 << 20) + 4096 - 600 // under the stream's MaxMsgSize with the headers
	pub("oversized", func(m *nats.Msg) { m.Data = []byte(`{"text":"` + strings.Repeat("A", huge) + `"}`) })
	pub("sent not a time", func(m *nats.Msg) { m.Header.Set(HeaderSent, "yesterday") })
	pub("empty key", func(m *nats.Msg) { m.Header.Set(HeaderKey, "") })
	pub("huge signature", func(m *nats.Msg) { m.Header.Set(HeaderSignature, strings.Repeat("A", 60<<10)) })
	next(t, in, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "marker"}), "a malformed message")
	for _, p := range f.pr.wait(t, 4) {
		if !strings.Contains(p.Reason, "dead-lettered to") {
			t.Errorf("report %q: want a refusal kept as a dead letter (one that cannot be stored stays and is reported again every second)", p.Reason)
		}
	}
}
