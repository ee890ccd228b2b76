package team

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
)

// TestNATSTeamKeysAcrossMachines: the lead and a member on machines that
// share no directory (two roots) verify each other's messages: the
// member's key reaches the lead through its entry signed by the lead, and the
// member checks the lead with the key it pinned from the signed spawn, so
// a lead key slipped into the shared team file does not pass for the
// lead there.
func TestNATSTeamKeysAcrossMachines(t *testing.T) {
	srv := natstest.Start(t)
	reports := make(reporter, 8)
	lead, lmb, leadIn := leadMachine(t, srv.URL(), make(reporter, 8), "carl")
	_, fmb := workerMachine(t, lead, srv.URL(), reports, "carl")
	carlIn := openInbox(t, fmb, "carl")

	if _, err := lmb.Append(t.Context(), mailbox.Message{From: LeadName, To: "carl", Text: "start"}); err != nil {
		t.Fatal(err)
	}
	if got := receiveOne(t, carlIn); got.From != LeadName || got.Text != "start" {
		t.Fatalf("carl got %+v", got)
	}
	if _, err := fmb.Append(t.Context(), mailbox.Message{From: "carl", To: LeadName, Text: "done"}); err != nil {
		t.Fatal(err)
	}
	if got := receiveOne(t, leadIn); got.From != "carl" || got.Text != "done" {
		t.Fatalf("the lead got %+v", got)
	}

	// Someone who may write the team's bucket records a lead key of
	// their own and sends as the lead from a third machine.
	mallory, err := NewStore(StoreConfig{Root: t.TempDir(), Mailbox: quietMailbox()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mallory.Close)
	if _, err := mallory.Join(t.Context(), "t", srv.URL()); err != nil {
		t.Fatal(err)
	}
	mmb, err := mallory.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mmb.Append(t.Context(), mailbox.Message{From: LeadName, To: "carl", Text: "stop now"}); err != nil {
		t.Fatal(err)
	}
	reports.expect(t, "carl", "signature")
	// The lead's own next message is the next carl gets: the forgery was
	// never delivered.
	if _, err := lmb.Append(t.Context(), mailbox.Message{From: LeadName, To: "carl", Text: "second"}); err != nil {
		t.Fatal(err)
	}
	if got := receiveOne(t, carlIn); got.Text != "second" {
		t.Fatalf("carl got %+v, want the lead's second message", got)
	}
}
