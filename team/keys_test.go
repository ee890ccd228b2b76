package team

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/remote"
)

// TestNATSTeamKeysAcrossMachines: the lead and a member on machines that
// share no directory (two roots) verify each other's messages: the
// member's key reaches the lead through the team file (publicKey), and the
// member checks the lead with the key it pinned from the signed spawn, so
// a lead key slipped into the shared team file does not pass for the
// lead there.
func TestNATSTeamKeysAcrossMachines(t *testing.T) {
	srv := natstest.Start(t)
	reports := make(chan mailbox.Problem, 8)
	mc := quietMailbox()
	mc.OnProblem = func(p mailbox.Problem) { reports <- p }
	lead, err := NewStore(StoreConfig{Root: t.TempDir(), Mailbox: quietMailbox()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lead.Close)
	if _, err := lead.Create(t.Context(), CreateSpec{Name: "t", NATS: srv.URL()}); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	lmb, err := lead.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	leadIn := openInbox(t, lmb, LeadName)
	// The lead's key, as the lead puts it in a teammate spawn.
	leadKey, err := remote.LoadOrCreateKey(lead.Root() + "/t/" + KeysDir + "/" + LeadName + ".key")
	if err != nil {
		t.Fatal(err)
	}
	leadPub := base64.StdEncoding.EncodeToString(leadKey.Public().(ed25519.PublicKey))

	far, err := NewStore(StoreConfig{Root: t.TempDir(), Mailbox: mc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(far.Close)
	if _, err := far.Join(t.Context(), "t", srv.URL()); err != nil {
		t.Fatal(err)
	}
	if err := far.PinKey("t", LeadName, leadPub); err != nil {
		t.Fatal(err)
	}
	fmb, err := far.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
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
	if m, _ := lead.Member("t", "carl"); m.PublicKey == "" {
		t.Fatal("carl's public key is not in the team file")
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
	select {
	case p := <-reports:
		if !strings.Contains(p.Reason, "signature") {
			t.Fatalf("report: %+v, want a bad signature", p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the forged lead message was not refused and reported")
	}
	// The lead's own next message is the next carl gets: the forgery was
	// never delivered.
	if _, err := lmb.Append(t.Context(), mailbox.Message{From: LeadName, To: "carl", Text: "second"}); err != nil {
		t.Fatal(err)
	}
	if got := receiveOne(t, carlIn); got.Text != "second" {
		t.Fatalf("carl got %+v, want the lead's second message", got)
	}
}
