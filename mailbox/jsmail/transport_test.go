package jsmail

import (
	"errors"
	"slices"
	"testing"

	"github.com/cohort-dev/cohort/mailbox"
)

func pending(t *testing.T, f *fixture, agent string) int {
	t.Helper()
	n, err := f.tr.Pending(t.Context(), agent)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRoundTrip: the file mailbox's schema and ids travel unchanged, a
// message acknowledged is gone, and a restarted consumer gets nothing.
func TestRoundTrip(t *testing.T) {
	f := newFixture(t, Config{}, []string{"alice", "team-lead"}, "team-lead", "alice")
	in := f.open(t, "team-lead")
	sent := f.send(t, mailbox.Message{From: "alice", To: "team-lead", Text: "done: <b>", Summary: "s", Color: "blue"})
	if err := mailbox.ValidateID(sent.ID); err != nil || sent.Timestamp.IsZero() {
		t.Fatalf("Append gave id %q at %v (%v)", sent.ID, sent.Timestamp, err)
	}
	got := receive(t, in, 1)
	if !got[0].Timestamp.Equal(sent.Timestamp) || got[0].Text != sent.Text || got[0].ID != sent.ID ||
		got[0].Summary != "s" || got[0].Color != "blue" || got[0].From != "alice" {
		t.Fatalf("received %+v, sent %+v", got[0], sent)
	}
	if n := pending(t, f, "team-lead"); n != 1 {
		t.Fatalf("pending before ack = %d, want 1", n)
	}
	if err := in.Ack(t.Context(), sent.ID); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, f, "team-lead"); n != 0 {
		t.Fatalf("pending after ack = %d, want 0", n)
	}
	if err := in.Ack(t.Context(), "0123"); !errors.Is(err, mailbox.ErrNotDelivered) {
		t.Fatalf("ack of an id never delivered: %v, want ErrNotDelivered", err)
	}
	if in.Agent() != "team-lead" {
		t.Fatalf("Agent() = %q", in.Agent())
	}
	if len(f.pr.all()) != 0 {
		t.Fatalf("problems: %v", f.pr.all())
	}
}

// TestRestartRedeliversUnacknowledged: a consumer that closes (or dies)
// holding messages leaves exactly those for the next one, at once.
func TestRestartRedeliversUnacknowledged(t *testing.T) {
	f := newFixture(t, Config{}, []string{"alice"}, "bob")
	in := f.open(t, "bob")
	var sent []string
	for _, text := range []string{"one", "two", "three"} {
		sent = append(sent, f.send(t, mailbox.Message{From: "alice", To: "bob", Text: text}).ID)
	}
	got := receive(t, in, 3)
	if !slices.Equal(ids(got), sent) {
		t.Fatalf("order %v, sent %v", ids(got), sent)
	}
	if err := in.Ack(t.Context(), sent[1]); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Read(t.Context()); !errors.Is(err, mailbox.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	in2 := f.open(t, "bob")
	again := receive(t, in2, 2)
	if want := []string{sent[0], sent[2]}; !slices.Equal(ids(again), want) {
		t.Fatalf("redelivered %v, want %v", ids(again), want)
	}
	if err := in2.Ack(t.Context(), ids(again)...); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, f, "bob"); n != 0 {
		t.Fatalf("pending = %d after everything was acknowledged", n)
	}
}

// TestOneConsumer: a second live consumer of an inbox is refused, and may
// take it once the first closes.
func TestOneConsumer(t *testing.T) {
	f := newFixture(t, Config{}, nil, "bob")
	in := f.open(t, "bob")
	if _, err := f.tr.OpenInbox(t.Context(), "bob"); !errors.Is(err, mailbox.ErrReaderBusy) {
		t.Fatalf("second consumer: %v, want ErrReaderBusy", err)
	}
	in.Close()
	f.open(t, "bob")
}

// TestUnknownRecipient: nothing is stored for an agent that never
// registered, and a name that is not one is refused before any subject is
// built from it.
func TestUnknownRecipient(t *testing.T) {
	f := newFixture(t, Config{}, []string{"alice"}, "bob")
	if _, err := f.tr.Append(t.Context(), mailbox.Message{From: "alice", To: "carol", Text: "hi"}); !errors.Is(err, mailbox.ErrUnknownRecipient) {
		t.Fatalf("append to carol: %v", err)
	}
	if _, err := f.tr.Append(t.Context(), mailbox.Message{From: "alice", To: "bob.>", Text: "hi"}); !errors.Is(err, mailbox.ErrInvalidName) {
		t.Fatalf("append to a wildcard: %v", err)
	}
	if _, err := f.tr.OpenInbox(t.Context(), "carol"); !errors.Is(err, mailbox.ErrUnknownRecipient) {
		t.Fatalf("open carol: %v", err)
	}
	// Another process's Transport sees bob registered.
	other, err := Open(t.Context(), Config{Conn: connect(t, f.srv.URL()), Team: "t", Keys: f.keys})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append(t.Context(), mailbox.Message{From: "alice", To: "bob", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
}

// TestResendDeliveredOnce: a retried Append with the same id is one
// message, within the server's window and past it (the inbox's own
// memory of acknowledged ids).
func TestResendDeliveredOnce(t *testing.T) {
	f := newFixture(t, Config{}, []string{"alice"}, "bob")
	in := f.open(t, "bob")
	m := f.send(t, mailbox.Message{From: "alice", To: "bob", Text: "once"})
	f.send(t, m)
	got := receive(t, in, 1)
	if err := in.Ack(t.Context(), got[0].ID); err != nil {
		t.Fatal(err)
	}
	// Past the server's window: purge its memory by publishing without
	// the id header, as a sender whose window ran out would.
	msg := natsMsg(t, f, "bob", m)
	if _, err := f.tr.js.PublishMsg(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
	last := f.send(t, mailbox.Message{From: "alice", To: "bob", Text: "after"})
	got = receive(t, in, 1)
	if len(got) != 1 || got[0].ID != last.ID {
		t.Fatalf("after a late re-send got %v, want only %s", ids(got), last.ID)
	}
	if err := in.Ack(t.Context(), last.ID); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, f, "bob"); n != 0 {
		t.Fatalf("pending = %d: the repeat was not acknowledged", n)
	}
}
