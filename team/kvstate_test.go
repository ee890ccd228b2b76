package team

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/tasklist"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// machine is a Store with a root of its own: another machine's
// COHORT_HOME/teams.
func machine(t *testing.T) *Store {
	t.Helper()
	s, err := NewStore(StoreConfig{Root: t.TempDir(), Now: stepClock(), Mailbox: quietMailbox()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestNATSTeamFileIsShared: two machines (two roots) on one server see
// one team file — members, isActive and allowed paths — and one task list,
// where a task is claimed once; concurrent member additions from both
// are all kept.
func TestNATSTeamFileIsShared(t *testing.T) {
	srv := natstest.Start(t)
	a, b := machine(t), machine(t)
	ctx := t.Context()
	if _, err := b.Join(ctx, "t", srv.URL()); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "the lead creates the team first") {
		t.Fatalf("joining a team the server does not hold: %v", err)
	}
	if _, err := a.Create(ctx, CreateSpec{Name: "t", NATS: srv.URL()}); err != nil {
		t.Fatal(err)
	}
	joined, err := b.Join(ctx, "t", srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if joined.Config.NATS != srv.URL() || joined.Config.LeadAgentID != AgentID(LeadName, "t") {
		t.Fatalf("joined %+v", joined.Config)
	}
	// b runs members, as a worker does: it checks the lead's terms with
	// the lead's key, pinned from a spawn.
	leadPub, err := a.LeadKey("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.PinKey("t", LeadName, leadPub); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		s := []*Store{a, b}[i%2]
		wg.Go(func() {
			if _, err := s.AddMember(ctx, "t", MemberSpec{Name: fmt.Sprint("m", i)}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := a.AddAllowedPath(ctx, "t", AllowedPath{Path: "/src", ToolName: "Edit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SetActive(ctx, "t", "m0", false); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*Store{"a": a, "b": b} {
		tm, err := s.Load("t")
		if err != nil {
			t.Fatal(name, err)
		}
		var active []string
		for _, m := range tm.ActiveMembers() {
			active = append(active, m.Name)
		}
		slices.Sort(active)
		if strings.Join(active, ",") != "m1,m2,m3,team-lead" {
			t.Errorf("%s sees active members %v", name, active)
		}
		if len(tm.Config.Members) != 5 || len(tm.Config.TeamAllowedPaths) != 1 {
			t.Errorf("%s sees %d members and allowed paths %v", name, len(tm.Config.Members), tm.Config.TeamAllowedPaths)
		}
	}

	// b signs its task changes with m1's key, which the lead granted
	// (tasksign.go); without one it cannot change the list.
	lb, err := b.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lb.Create(ctx, tasklist.TaskSpec{Subject: "unsigned"}); err == nil || !strings.Contains(err.Error(), "holds no member key the lead granted") {
		t.Fatalf("a task created by a machine with no member key: %v", err)
	}
	admit(t, a, b, "m1")
	la, err := a.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	lb, err = b.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	task, err := la.Create(ctx, tasklist.TaskSpec{Subject: "build"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lb.Claim(ctx, task.ID, "m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := la.Claim(ctx, task.ID, "m2"); !errors.Is(err, tasklist.ErrClaimed) {
		t.Errorf("a second machine's claim: %v", err)
	}
	if got, _ := la.Get(ctx, task.ID); got.Owner != "m1" {
		t.Errorf("machine a sees owner %q", got.Owner)
	}
}

// TestNATSTeamFileBadEntry: a team file on the server that does not parse
// is reported with its bucket, key and revision; no update overwrites it.
func TestNATSTeamFileBadEntry(t *testing.T) {
	srv := natstest.Start(t)
	s := machine(t)
	if _, err := s.Create(t.Context(), CreateSpec{Name: "t", NATS: srv.URL()}); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.KeyValue(t.Context(), StateBucket("t"))
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(t.Context(), ConfigKey, []byte(`{"name": "t", "members": [`))
	if err != nil {
		t.Fatal(err)
	}
	var fe *jsonfile.Error
	want := fmt.Sprintf("bucket %s key %s revision %d", StateBucket("t"), ConfigKey, rev)
	if _, err := s.Load("t"); !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
		t.Errorf("Load: %v, want an error naming %q", err, want)
	}
	if _, err := s.AddMember(t.Context(), "t", MemberSpec{Name: "alice"}); !errors.As(err, &fe) {
		t.Errorf("AddMember over a broken team file: %v", err)
	}
	if e, _ := kv.Get(t.Context(), ConfigKey); e.Revision() != rev {
		t.Errorf("the broken team file was overwritten (revision %d, was %d)", e.Revision(), rev)
	}
}
