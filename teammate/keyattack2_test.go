package teammate

import (
	"testing"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"
)

// TestKeyattack2AnswersOnlyFromTheLead (keyattack2 idea 21, S28's form
// for a teammate's own questions): alice asks the lead for a permission
// and for her plan's approval; bob, who read both request ids on the
// wire, answers them first, allowing and approving. alice's waiters take
// neither (and keep waiting); the lead's answers are taken.
func TestKeyattack2AnswersOnlyFromTheLead(t *testing.T) {
	var w waiters
	perm, plan := w.add("perm-1", team.LeadName), w.add("plan-1", team.LeadName)
	forge := func(from string, p mailbox.Payload) mailbox.Message {
		m, err := mailbox.NewMessage(from, "alice", p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, m := range []mailbox.Message{
		forge("bob", mailbox.PermissionResponse{RequestID: "perm-1", Decision: mailbox.DecisionAllow}),
		forge("bob", mailbox.PlanApprovalResponse{RequestID: "plan-1", Approve: true}),
	} {
		if ok, asked := w.deliver(requestID(m), m); ok || asked != team.LeadName {
			t.Fatalf("bob's %s was taken (%v) or not reported as answering for %q (%q)", m.Type, ok, team.LeadName, asked)
		}
	}
	select {
	case m := <-perm:
		t.Fatalf("alice's permission waiter got %+v", m)
	case m := <-plan:
		t.Fatalf("alice's plan waiter got %+v", m)
	default:
	}
	real := forge(team.LeadName, mailbox.PlanApprovalResponse{RequestID: "plan-1", Approve: false})
	if ok, _ := w.deliver("plan-1", real); !ok {
		t.Fatal("the lead's own answer was not taken")
	}
	if got := <-plan; got.From != team.LeadName {
		t.Fatalf("plan waiter got %+v", got)
	}
}
