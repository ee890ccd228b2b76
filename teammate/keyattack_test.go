package teammate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"
)

// TestKeyattackShutdownAnsweredByAnotherMember (keyattack, session 6):
// the lead asks alice to shut down; bob, a member with a valid key who
// saw the request id (on a NATS team, any client reads the wire),
// answers it "approved" in alice's place, and then alice's own answer,
// a refusal, comes. The lead counts only alice's answer and reports
// bob's (/work/notes/keyattack-log.md, row 28: it escaped until the
// waiters matched the sender).
func TestKeyattackShutdownAnsweredByAnotherMember(t *testing.T) {
	refused := make(chan Event, 4)
	f := newFixtureLead(t, nil, func(c *LeadConfig) {
		c.OnEvent = func(ev Event) {
			if ev.Kind == EventRefused {
				refused <- ev
			}
		}
	}, "alice", "bob")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	approved := make(chan bool, 1)
	go func() { approved <- f.l.askShutdown(ctx, "alice", "done", 15*time.Second) }()
	r, err := f.mbox.OpenInbox(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	msgs, err := r.Receive(ctx)
	if err != nil || len(msgs) != 1 || msgs[0].Type != mailbox.TypeShutdownRequest {
		t.Fatalf("alice's inbox: %+v (%v)", msgs, err)
	}
	p, _ := msgs[0].Payload()
	id := p.(mailbox.ShutdownRequest).RequestID
	forged, _ := mailbox.NewMessage("bob", team.LeadName, mailbox.ShutdownResponse{RequestID: id, Approve: true})
	if _, err := f.mbox.Append(ctx, forged); err != nil {
		t.Fatal(err)
	}
	refusal, _ := mailbox.NewMessage("alice", team.LeadName, mailbox.ShutdownResponse{RequestID: id, Approve: false, Reason: "busy"})
	if _, err := f.mbox.Append(ctx, refusal); err != nil {
		t.Fatal(err)
	}
	if <-approved {
		t.Fatal("the lead took bob's approval of alice's shutdown request: alice counts as approved and is stopped")
	}
	select {
	case ev := <-refused:
		if ev.From != "bob" || !strings.Contains(ev.Text, "alice") {
			t.Errorf("refusal reported as %+v, want bob's answer for alice", ev)
		}
	default:
		t.Error("bob's answer in alice's place was not reported")
	}
}
