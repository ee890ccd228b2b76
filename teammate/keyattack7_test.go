package teammate

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/team"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks from outside (keyattack7): a NATS client with the run of the
// team's buckets, as issue 42's premise allows.

// teammateAfter makes team t on url with member carl, runs before (the
// attacker's moves, the lead's machine's fate), then starts carl in his
// own process with a board of his own, as a worker does, and waits for
// his first turn.
func teammateAfter(t *testing.T, url string, deadAfter time.Duration, before func(f *fixture)) (*Loop, <-chan error) {
	t.Helper()
	inTurn := make(chan struct{})
	var once sync.Once
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "endless job") {
			once.Do(func() { close(inTurn) })
			<-q.Context().Done()
		}
		return fakeapi.TextReply("ok")
	}
	f := newFixtureLead(t, policy, func(c *LeadConfig) { c.NATS, c.Heartbeat = url, 20*time.Millisecond })
	m, err := f.store.AddMember(t.Context(), "t", team.MemberSpec{Name: "carl", AgentType: "general-purpose", Prompt: "endless job"})
	if err != nil {
		t.Fatal(err)
	}
	before(f)
	store, err := team.NewStore(team.StoreConfig{Root: f.store.Root()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	gp, _ := f.rt.Catalog().Get(agentdef.GeneralPurpose)
	tm, err := Start(t.Context(), Config{Team: "t", Member: m, Store: store, Runtime: f.rt, Def: gp,
		Checker: f.checker.ForChild(""), Heartbeat: 20 * time.Millisecond, LeadModel: "claude-sonnet-5-5",
		LeadDeadAfter: deadAfter, LeadGoneGrace: 50 * time.Millisecond, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tm.Run(t.Context()) }()
	select {
	case <-inTurn:
	case <-time.After(30 * time.Second):
		t.Fatal("carl did not start his turn")
	}
	return tm, done
}

// purgeLead purges team t's lead status key, as an attacker's raw
// client does.
func purgeLead(t *testing.T, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), "COHORT_TEAM_t_STATUS")
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(t.Context(), team.LeadName); err != nil {
		t.Fatal(err)
	}
}

// TestKeyattack7LeadsStatusPurgedAfterItsMachineDied (escape 3): the
// lead's machine dies; the attacker purges the lead's status key once;
// carl, spawned afterwards (a worker that has never seen his lead's
// status), reads no status of the lead at all. "No status" never aged:
// carl worked on, unwatched. It must count as a beat that stopped when
// carl started watching.
func TestKeyattack7LeadsStatusPurgedAfterItsMachineDied(t *testing.T) {
	srv := natstest.Start(t)
	tm, done := teammateAfter(t, srv.URL(), 300*time.Millisecond, func(f *fixture) {
		f.store.Close() // the lead's machine vanishes: no more beats
		purgeLead(t, srv.URL())
	})
	select {
	case err := <-done:
		if !errors.Is(err, ErrLeadGone) {
			t.Fatalf("Run: %v; want ErrLeadGone", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("carl, who never saw a status of his lead (purged after its machine died), works on unwatched 20 s later; want the lead gone after LeadDeadAfter (300ms)")
	}
	if !strings.Contains(tm.lead.reason, "no status from the lead") {
		t.Errorf("reason %q does not say the lead's status was never seen", tm.lead.reason)
	}
}

// TestKeyattack7LiveLeadPurgedBeforeTheSpawn is the control: the lead
// lives and beats; the attacker purges its status key before carl
// starts. A fresh reader takes no lone beat above a purge (team's
// kvboard.go), so carl sees his lead from its second beat on: well
// within LeadDeadAfter, he must not take it for gone.
func TestKeyattack7LiveLeadPurgedBeforeTheSpawn(t *testing.T) {
	srv := natstest.Start(t)
	_, done := teammateAfter(t, srv.URL(), 2*time.Second, func(*fixture) { purgeLead(t, srv.URL()) })
	select {
	case err := <-done:
		t.Fatalf("carl's Run ended (%v) while his lead beats: a slow first beat after a purge was taken for a gone lead", err)
	case <-time.After(3 * 2 * time.Second):
	}
}
