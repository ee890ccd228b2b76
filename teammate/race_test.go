package teammate

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"
)

// startLoop runs member name of team "t" as an in-process teammate.
func (f *fixture) startLoop(t *testing.T, name string) *Loop {
	t.Helper()
	m, err := f.store.Member("t", name)
	if err != nil {
		t.Fatal(err)
	}
	gp, _ := f.rt.Catalog().Get(agent.GeneralPurpose)
	tm, err := Start(t.Context(), Config{Team: "t", Member: m, Store: f.store, Runtime: f.rt, Def: gp,
		Checker: f.checker.ForChild(""), Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// waitQuiet waits until the lead sees the team quiet.
func (f *fixture) waitQuiet(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		changed := f.l.Changed()
		if !f.l.Busy() {
			return
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Millisecond): // also re-read the lead's inbox state
		}
		if time.Now().After(deadline) {
			t.Fatal("the team never went quiet")
		}
	}
}

// TestAMessageInATeammatesHandsKeepsTheTeamBusy forces the interleaving
// that lost messages: the lead's quiet check runs at the moment a
// teammate has taken a message from its inbox (acknowledging it) and not
// yet started the turn that reads it. The team must count as busy there.
func TestAMessageInATeammatesHandsKeepsTheTeamBusy(t *testing.T) {
	f := newFixtureWith(t, func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "PING") {
			return fakeapi.TextReply("pong")
		}
		return fakeapi.TextReply("ready")
	})
	// Only bob runs: alice, who never starts, would keep the team busy.
	if _, err := f.store.SetActive(t.Context(), "t", "alice", false); err != nil {
		t.Fatal(err)
	}
	tm := f.startLoop(t, "bob")
	var quiet atomic.Bool
	var first atomic.Bool
	first.Store(true)
	taken := make(chan struct{}, 1)
	tm.testHookTaken = func() {
		if first.Swap(false) {
			return // the spawn prompt, not a message
		}
		if !f.l.Busy() {
			quiet.Store(true)
		}
		select {
		case taken <- struct{}{}:
		default:
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- tm.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	f.waitQuiet(t)
	if _, err := f.mbox.Append(t.Context(), mailbox.Message{From: team.LeadName, To: "bob", Text: "PING"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-taken:
	case <-time.After(30 * time.Second):
		t.Fatal("bob never took the message")
	}
	if quiet.Load() {
		t.Fatal("the lead saw the team quiet while bob held a message it had not read")
	}
	f.waitQuiet(t)
}
