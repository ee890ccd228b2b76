package team

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
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
