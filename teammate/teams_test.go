package teammate

import (
	"errors"
	"testing"

	"github.com/cohort-dev/cohort/team"
)

// TestTeamsShowsTheLeadsStateAndPruneTakesOnlyOrphans: a team this
// session leads is active and cannot be removed; once the lead closes, the
// team is orphaned, its lead marked inactive, and Prune removes it.
func TestTeamsShowsTheLeadsStateAndPruneTakesOnlyOrphans(t *testing.T) {
	f := newFixture(t)
	states, err := Teams(f.store)
	if err != nil || len(states) != 1 {
		t.Fatalf("Teams: %+v, %v", states, err)
	}
	st := states[0]
	if st.Name != "t" || st.Orphaned() || st.Lead.SessionID != "s" || len(st.Members) != 2 {
		t.Fatalf("led team: %+v", st)
	}
	if err := RemoveTeam(t.Context(), f.store, "t", true); !errors.Is(err, ErrTeamRunning) {
		t.Fatalf("RemoveTeam of a led team: %v; want ErrTeamRunning", err)
	}
	if removed, err := Prune(t.Context(), f.store); err != nil || len(removed) != 0 {
		t.Fatalf("Prune with the lead running: %v, %v", removed, err)
	}
	f.l.Close()
	st = Inspect(f.store, "t")
	if !st.Orphaned() {
		t.Fatalf("after Close: %+v; want orphaned", st)
	}
	if m, err := f.store.Member("t", team.LeadName); err != nil || m.IsActive {
		t.Fatalf("lead after Close: %+v, %v; want inactive", m, err)
	}
	removed, err := Prune(t.Context(), f.store)
	if err != nil || len(removed) != 1 || removed[0] != "t" {
		t.Fatalf("Prune: %v, %v", removed, err)
	}
}

// TestAResumedLeadTakesBackItsTeam: a session that led a team and ended
// gets it back with Resume; the teammate that died with it no longer
// counts as active, so the team is not busy waiting for it.
func TestAResumedLeadTakesBackItsTeam(t *testing.T) {
	f := newFixture(t)
	dir, _ := f.store.Dir("t")
	pub, err := newPublisher(team.FileStatuses(dir), "alice", f.l.cfg.Now)
	if err != nil {
		t.Fatal(err)
	}
	_ = pub.set(StateBusy)
	pub.st.PID = 1 << 22 // beyond pid_max: a process that is gone
	_ = pub.beat()
	f.l.Close()

	l2, err := NewLead(f.l.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	name, err := l2.Resume(t.Context(), f.leadAgent)
	if err != nil || name != "t" {
		t.Fatalf("Resume: %q, %v", name, err)
	}
	if st := Inspect(f.store, "t"); st.Orphaned() {
		t.Fatalf("after Resume: %+v; want led", st)
	}
	if m, _ := f.store.Member("t", "alice"); m.IsActive {
		t.Fatal("the dead teammate is still active")
	}
	if l2.Busy() {
		t.Fatal("the resumed team is busy with a dead teammate")
	}
}
