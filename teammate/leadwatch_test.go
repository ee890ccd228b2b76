package teammate

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/team"
)

// startProcessLoop runs member name as a teammate in "its own process" (no
// ParentID: it watches its lead), polling often.
func (f *fixture) startProcessLoop(t *testing.T, name string, grace time.Duration) (*Loop, <-chan error) {
	t.Helper()
	m, err := f.store.Member("t", name)
	if err != nil {
		t.Fatal(err)
	}
	m.SessionID = "s"
	gp, _ := f.rt.Catalog().Get(agentdef.GeneralPurpose)
	tm, err := Start(t.Context(), Config{Team: "t", Member: m, Store: f.store, Runtime: f.rt, Def: gp,
		Checker: f.checker.ForChild(""), Heartbeat: 10 * time.Millisecond, LeadGoneGrace: grace, LeadModel: "claude-sonnet-5-5",
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tm.Run(t.Context()) }()
	return tm, done
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the teammate did not exit")
		return nil
	}
}

// TestATeammateWhoseLeadIsGoneFinishesItsTurnAndExits is issue 17 item 4:
// the lead goes away (its lead lock is released, as when its process dies)
// while the teammate is in the middle of a turn. The teammate lets the turn
// end, records that it stopped and why, leaves the team file, and exits.
func TestATeammateWhoseLeadIsGoneFinishesItsTurnAndExits(t *testing.T) {
	inTurn, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	f := newFixtureWith(t, func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "long job") {
			close(inTurn)
			<-release
			finished.Store(true)
			return fakeapi.TextReply("job done")
		}
		return fakeapi.TextReply("ok")
	}, "bob")
	if _, err := f.store.AddMember(t.Context(), "t", team.MemberSpec{Name: "carl", AgentType: "general-purpose", Prompt: "long job"}); err != nil {
		t.Fatal(err)
	}
	tm, done := f.startProcessLoop(t, "carl", time.Minute)
	<-inTurn
	f.l.Close() // the lead is gone
	select {
	case <-tm.lead.gone:
	case <-time.After(30 * time.Second):
		t.Fatal("the teammate never noticed its lead was gone")
	}
	close(release)
	err := waitErr(t, done)
	if !errors.Is(err, ErrLeadGone) {
		t.Fatalf("Run: %v; want ErrLeadGone", err)
	}
	if !finished.Load() {
		t.Fatal("the turn in progress was not finished")
	}
	dir, _ := f.store.Dir("t")
	st, ok, _ := readStatus(team.FileStatuses(dir), "carl")
	if !ok || st.State != StateStopped || !strings.Contains(st.Reason, "lead gone") {
		t.Fatalf("status after: %+v", st)
	}
	if m, _ := f.store.Member("t", "carl"); m.IsActive {
		t.Fatal("carl is still active in the team file")
	}
}

// TestALeadGoneTurnIsCancelledAfterTheGrace: a turn that does not end by
// itself is cancelled once the grace period has passed.
func TestALeadGoneTurnIsCancelledAfterTheGrace(t *testing.T) {
	inTurn := make(chan struct{})
	f := newFixtureWith(t, func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "endless job") {
			close(inTurn)
			<-q.Context().Done()
		}
		return fakeapi.TextReply("ok")
	}, "bob")
	if _, err := f.store.AddMember(t.Context(), "t", team.MemberSpec{Name: "carl", AgentType: "general-purpose", Prompt: "endless job"}); err != nil {
		t.Fatal(err)
	}
	_, done := f.startProcessLoop(t, "carl", 50*time.Millisecond)
	<-inTurn
	f.l.Close()
	if err := waitErr(t, done); !errors.Is(err, ErrLeadGone) {
		t.Fatalf("Run: %v; want ErrLeadGone", err)
	}
}

// TestAnIdleTeammateLeavesWhenAnotherSessionTakesTheTeamOver: a new lead
// (another session) holding the lock is not this teammate's lead.
func TestAnIdleTeammateLeavesWhenAnotherSessionTakesTheTeamOver(t *testing.T) {
	f := newFixtureWith(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") }, "bob")
	tm, done := f.startProcessLoop(t, "bob", time.Minute)
	f.waitQuiet(t)
	f.l.Close()
	c, err := f.store.Claim(context.Background(), team.CreateSpec{Name: "t", LeadSessionID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Lead.Release()
	if err := waitErr(t, done); !errors.Is(err, ErrLeadGone) {
		t.Fatalf("Run: %v; want ErrLeadGone", err)
	}
	if tm.lead.reason == "" {
		t.Fatal("no reason recorded")
	}
}
