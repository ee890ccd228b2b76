package team

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/mailbox/jsmail"
)

// TestNATSTeamUnreachable: a team whose file names a NATS server that is
// not there fails at start, naming the server and what to do, and never
// falls back to files.
func TestNATSTeamUnreachable(t *testing.T) {
	s := newStore(t)
	t.Cleanup(s.Close)
	const server = "nats://127.0.0.1:1"
	_, err := s.Create(t.Context(), CreateSpec{Name: "far", NATS: server})
	if err == nil || !strings.Contains(err.Error(), server) || !strings.Contains(err.Error(), "start that server") ||
		!strings.Contains(err.Error(), "does not fall back to files") {
		t.Fatalf("create with an unreachable server: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "far")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed create left the team directory: %v", err)
	}
	// A file team whose file is edited to name the server.
	mustCreate(t, s, "near")
	if _, err := s.Update(t.Context(), "near", func(c *Config) error { c.NATS = server; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Mailbox("near"); err == nil || !strings.Contains(err.Error(), server) ||
		!strings.Contains(err.Error(), filepath.Join(s.Root(), "near", ConfigFile)) {
		t.Fatalf("mailbox of a team naming an unreachable server: %v", err)
	}
	if _, err := s.AddMember(t.Context(), "near", MemberSpec{Name: "alice"}); err == nil || !strings.Contains(err.Error(), server) {
		t.Fatalf("add member: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "near", InboxesDir, "alice.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("alice got a file inbox: %v", err)
	}
}

// TestNATSTeamMailboxes: a team whose file names a NATS server keeps every
// member's inbox on JetStream, for every process that opens the team (two
// stores on one root stand for two processes), with messages signed by
// the members' own keys; a name outside the team can neither sign nor be
// trusted.
func TestNATSTeamMailboxes(t *testing.T) {
	srv := natstest.Start(t)
	var reports []mailbox.Problem
	mc := quietMailbox()
	mc.OnProblem = func(p mailbox.Problem) { reports = append(reports, p) }
	lead, err := NewStore(StoreConfig{Root: t.TempDir(), Now: stepClock(), Mailbox: mc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lead.Close)
	if _, err := lead.Create(t.Context(), CreateSpec{Name: "t", NATS: srv.URL()}); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(lead.Root(), "t", InboxesDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a JetStream team has an inboxes directory: %v", err)
	}
	member, err := NewStore(StoreConfig{Root: lead.Root(), Mailbox: quietMailbox()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(member.Close)

	lmb, err := lead.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lmb.(*jsmail.Transport); !ok {
		t.Fatalf("the lead's mailbox is a %T, want JetStream", lmb)
	}
	mmb, err := member.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	leadIn := openInbox(t, lmb, LeadName)
	aliceIn := openInbox(t, mmb, "alice")

	toAlice, err := lmb.Append(t.Context(), mailbox.Message{From: LeadName, To: "alice", Text: "start"})
	if err != nil {
		t.Fatal(err)
	}
	if got := receiveOne(t, aliceIn); got.ID != toAlice.ID || got.From != LeadName {
		t.Fatalf("alice got %+v", got)
	}
	toLead, err := mmb.Append(t.Context(), mailbox.Message{From: "alice", To: LeadName, Text: "done"})
	if err != nil {
		t.Fatal(err)
	}
	if got := receiveOne(t, leadIn); got.ID != toLead.ID || got.Text != "done" {
		t.Fatalf("the lead got %+v", got)
	}
	if _, err := os.Stat(filepath.Join(lead.Root(), "t", KeysDir, "alice.key")); err != nil {
		t.Fatalf("alice's key: %v", err)
	}
	// mallory is no member: no key is made for her, so she cannot send.
	if _, err := mmb.Append(t.Context(), mailbox.Message{From: "mallory", To: LeadName, Text: "hi"}); err == nil ||
		!strings.Contains(err.Error(), "no key for sender") {
		t.Fatalf("a non-member sent: %v", err)
	}
	if n, err := lmb.Pending(t.Context(), LeadName); err != nil || n != 1 {
		t.Fatalf("lead pending = %d (%v), want 1 (unacknowledged)", n, err)
	}
	if len(reports) != 0 {
		t.Fatalf("reports: %v", reports)
	}
}

func openInbox(t *testing.T, tr mailbox.Transport, agent string) mailbox.Inbox {
	t.Helper()
	in, err := tr.OpenInbox(t.Context(), agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

func receiveOne(t *testing.T, in mailbox.Inbox) mailbox.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	msgs, err := in.Receive(ctx)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %d messages (%v)", len(msgs), err)
	}
	return msgs[0]
}
