package team

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks from outside (keyattack7, its log lost; issue 42): a NATS
// client with the run of the team's buckets and the JetStream API, as
// issue 42's premise allows. Every escape found is fixed; the tests run
// ungated.

// grantsAll has the lead sign carl into bypassPermissions without plan
// approval, and edits under / allowed to every member.
func grantsAll(t *testing.T, lead *Store) {
	t.Helper()
	if _, err := lead.Update(t.Context(), "t", func(c *Config) error {
		c.Members[c.memberIndex("carl")].Mode = "bypassPermissions"
		c.Members[c.memberIndex("carl")].PlanModeRequired = false
		c.TeamAllowedPaths = append(c.TeamAllowedPaths, AllowedPath{Path: "/**", ToolName: "Edit", AddedBy: LeadName, AddedAt: time.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// requirePlan has the lead sign carl's plan to be approved, in default
// mode, and no team-allowed paths.
func requirePlan(t *testing.T, lead *Store) {
	t.Helper()
	if _, err := lead.Update(t.Context(), "t", func(c *Config) error {
		c.Members[c.memberIndex("carl")].Mode = "default"
		c.Members[c.memberIndex("carl")].PlanModeRequired = true
		c.TeamAllowedPaths = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// joinedAfter is a worker that takes carl's spawn from lead after the
// attacker put graft (a team file the lead once signed) in the bucket: it
// joins, pins the spawn's lead key and terms mark, and reads the team.
// It returns the worker's store and what it reported.
func joinedAfter(t *testing.T, lead *Store, srv string, graft []byte) (*Store, reporter) {
	t.Helper()
	newAttacker(t, srv).putFile(t, graft)
	r := make(reporter, 1024)
	w, err := NewStore(StoreConfig{Root: t.TempDir(), Mailbox: r.config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	if _, err := w.Join(t.Context(), "t", srv); err != nil {
		t.Fatal(err)
	}
	pub, err := lead.LeadKey("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.PinKey("t", LeadName, pub); err != nil {
		t.Fatal(err)
	}
	mark, err := lead.SpawnTerms("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.PinTerms("t", mark); err != nil {
		t.Fatal(err)
	}
	return w, r
}

// noGraft fails the test if w reads carl in bypassPermissions or without
// plan approval, or any team-allowed path, or a creation time other than
// made; a read refused outright is no graft. The refusal must have been
// reported.
func noGraft(t *testing.T, w *Store, r reporter, made time.Time) {
	t.Helper()
	tm, err := w.Load("t")
	if err == nil {
		i := tm.Config.memberIndex("carl")
		if i < 0 {
			t.Fatalf("carl's worker reads no carl in %+v", tm.Config.Members)
		}
		m := tm.Config.Members[i]
		if m.Mode == "bypassPermissions" || !m.PlanModeRequired {
			t.Errorf("carl's worker reads carl with mode %q, plan required %v: the grafted terms, not the lead's newest", m.Mode, m.PlanModeRequired)
		}
		if len(tm.Config.TeamAllowedPaths) > 0 {
			t.Errorf("carl's worker reads the grafted team-allowed paths %+v (they become prompt-free edit rules)", tm.Config.TeamAllowedPaths)
		}
		if !tm.Config.CreatedAt.Equal(made) {
			t.Errorf("carl's worker dates the team %s; it was made %s (the graft backdates it)", tm.Config.CreatedAt, made)
		}
	} else if !strings.Contains(err.Error(), "older than") {
		t.Fatalf("carl's worker cannot read the team, but not for the grafted terms: %v", err)
	}
	r.expect(t, "carl's worker", "spawn was issued under")
}

// TestKeyattack7EarlierTeamsTermsBeforeAJoin (escape 1a): an earlier team
// t, led with the same key, ran carl in bypassPermissions with no plan
// approval and Edit allowed under /. The new team t requires carl's
// plan. Before carl's worker joins, the attacker puts the earlier
// team's file back: a machine with no accepted terms took any terms the
// lead's key signed for "t".
func TestKeyattack7EarlierTeamsTermsBeforeAJoin(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	grantsAll(t, lead)
	earlier := newAttacker(t, srv).file(t)
	remadeWithCarl(t, lead, srv)
	requirePlan(t, lead)
	made := time.UnixMilli(createdAtOf(t, srv))
	w, r := joinedAfter(t, lead, srv, earlier)
	noGraft(t, w, r, made)
}

// TestKeyattack7RevokedTermsBeforeAJoin (escape 1b): the same team's own
// earlier terms, since revoked (carl's bypassPermissions and the allowed
// path taken back), put back before carl's worker joins.
func TestKeyattack7RevokedTermsBeforeAJoin(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	grantsAll(t, lead)
	revoked := newAttacker(t, srv).file(t)
	requirePlan(t, lead)
	made := time.UnixMilli(createdAtOf(t, srv))
	w, r := joinedAfter(t, lead, srv, revoked)
	noGraft(t, w, r, made)
}

// TestKeyattack7EarlierTeamsCreationBeforeAJoin (escape 1c): the earlier
// team's file, put back before the join, carries its own signed
// creation time: a worker that took it dates the new team as made then,
// and so takes the earlier team's lead statuses and signed tasks as its
// team's. The earlier team granted nothing here: the creation time alone
// is the graft.
func TestKeyattack7EarlierTeamsCreationBeforeAJoin(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	requirePlan(t, lead)
	earlier := newAttacker(t, srv).file(t)
	remadeWithCarl(t, lead, srv)
	requirePlan(t, lead)
	made := time.UnixMilli(createdAtOf(t, srv))
	w, r := joinedAfter(t, lead, srv, earlier)
	noGraft(t, w, r, made)
}

// rollupPut puts data as member's status with a "Nats-Rollup: sub"
// header: the server drops every earlier entry of the key and leaves no
// delete or purge marker.
func rollupPut(t *testing.T, srv, member string, data []byte) {
	t.Helper()
	a := newAttacker(t, srv)
	js, err := jetstream.New(a.nc)
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg("$KV." + statusBucket(t, srv).Bucket() + "." + member)
	msg.Data = data
	msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	if _, err := js.PublishMsg(t.Context(), msg); err != nil {
		t.Fatal(err)
	}
}

// TestKeyattack7RollupPutsADeadMemberBack (escape 2a): carl beats, the
// lead reads each beat and the attacker keeps the last; carl's machine
// vanishes and the lead marks him dead; the attacker puts the banked beat
// back with a rollup, which erases the history under it and leaves no
// marker. The lead's session resumed (a fresh reader) must not read the
// dead carl as working with a heartbeat from after his death.
func TestKeyattack7RollupPutsADeadMemberBack(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, leadIn, carlBoard, board := leadAndCarl(t, srv, make(reporter, 1024))
	kv := statusBucket(t, srv)
	var banked []byte
	for range 3 {
		if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
			t.Fatal(err)
		}
		readSeen(t, board, "carl")
		e, err := kv.Get(t.Context(), "carl")
		if err != nil {
			t.Fatal(err)
		}
		banked = e.Value()
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // carl's machine is gone
	died := time.Now()
	if err := board.Put(t.Context(), "carl", statusOf("carl", "dead")); err != nil {
		t.Fatal(err)
	}
	rollupPut(t, srv, "carl", banked)
	lead2, _ := reopenLead(t, lead, leadIn, make(reporter, 1024))
	b2, err := lead2.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if state, seen, ok := readIfAny(t, b2, "carl"); ok && !strings.Contains(state, "dead") && seen.After(died) {
		t.Fatalf("the resumed lead reads carl, dead and marked dead, as %s with a heartbeat %v after his death (his beat put back with a rollup)", state, seen.Sub(died).Round(time.Millisecond))
	}
}

// TestKeyattack7RollupPutsAnEarlierSessionsStopBack (escape 2b): the
// lead's earlier session said "stopped"; the lead resumed team t and
// beats "working"; carl is spawned on a worker. The attacker puts the
// earlier "stopped" back with a rollup (no marker: fix42c's check of a
// lone entry above an erasure does not see one). carl's fresh worker
// must not read its lead as stopped.
func TestKeyattack7RollupPutsAnEarlierSessionsStopBack(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	old := leadSaysStopped(t, lead, srv)
	time.Sleep(20 * time.Millisecond) // the lead resumes the team
	b, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
		t.Fatal(err)
	}
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	rollupPut(t, srv, LeadName, old)
	cb, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if data, _, ok := readIfAny(t, cb, LeadName); ok && strings.Contains(data, "stopped") {
		t.Fatalf("carl's fresh worker reads the resumed lead as %s (its earlier session's, put back with a rollup): carl would stop at once", data)
	}
}
