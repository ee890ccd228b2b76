package team

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"

	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on session 8's and 9's signed statuses and tasks from outside
// (keyattack4, /work/notes/keyattack4-log.md): a NATS client with the run
// of the team's buckets, as issue 42's premise allows. Each test asserts
// what the promise says. Every one here got through once; since
// keyfix5a (kvboard.go: a status's signed stamp read against the server's
// entry time, and the key's history read under junk) all hold.

// statusBucket is the attacker's handle on team t's status bucket.
func statusBucket(t *testing.T, srv string) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(newAttacker(t, srv).nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), "COHORT_TEAM_t_STATUS")
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func statusOf(member, state string) []byte {
	return []byte(`{"name":"` + member + `","state":"` + state + `"}`)
}

// bank reads member's signed status as the bucket holds it now, then
// puts junk over it, as a bucket writer watching the key can do moments
// after each put: a reader that asks later reads the junk.
func bank(t *testing.T, kv jetstream.KeyValue, member string) []byte {
	t.Helper()
	e, err := kv.Get(t.Context(), member)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), member, []byte("junk")); err != nil {
		t.Fatal(err)
	}
	return e.Value()
}

// readSeen is member's status on board and when the board first saw it.
func readSeen(t *testing.T, board StatusBoard, member string) (string, time.Time) {
	t.Helper()
	data, seen, ok, err := board.Get(t.Context(), member)
	if err != nil || !ok {
		t.Fatalf("board.Get(%s) = %s, %v, %v", member, data, ok, err)
	}
	return string(data), seen
}

// TestKeyattack4JunkOverALiveHeartbeat (ideas K1, K2): carl is alive and
// publishes a heartbeat every time; a bucket writer puts junk over each
// one right after. The lead's board passes the junk over and keeps
// carl's last status it accepted, with the time it first saw it: its
// age grows as if carl were silent, and past DeadAfter the lead declares
// a live member dead (its tasks released, its remote job cancelled). The
// same on a worker's board for team-lead's status: past LeadDeadAfter
// the teammate stops itself. The promise: a teammate is dead when its
// heartbeat is older than DeadAfter.
func TestKeyattack4JunkOverALiveHeartbeat(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, _, _ := leadMachine(t, srv, make(reporter, 1024), "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	kv := statusBucket(t, srv)
	for _, c := range []struct {
		name          string
		writer, board StatusBoard
		member        string
	}{{"carl read by the lead", carlBoard, board, "carl"}, {"the lead read by carl's worker", board, carlBoard, LeadName}} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.writer.Put(t.Context(), c.member, statusOf(c.member, "working")); err != nil {
				t.Fatal(err)
			}
			_, first := readSeen(t, c.board, c.member)
			time.Sleep(50 * time.Millisecond)
			for range 3 {
				if err := c.writer.Put(t.Context(), c.member, statusOf(c.member, "working")); err != nil {
					t.Fatal(err)
				}
				bank(t, kv, c.member)
				time.Sleep(50 * time.Millisecond)
			}
			if _, seen := readSeen(t, c.board, c.member); !seen.After(first) {
				t.Fatalf("%s published 3 heartbeats since the reader first saw it, each covered by junk: its heartbeat is still the one seen %v ago (dead after DeadAfter, though alive)", c.member, time.Since(first).Round(time.Millisecond))
			}
		})
	}
}

// bankedThenGone has carl publish a heartbeat the lead reads, then two
// that the attacker covers with junk and keeps; carl's machine then
// vanishes. It returns the lead's board, the attacker's bucket, the two
// banked heartbeats, when carl died and the server's URL.
func bankedThenGone(t *testing.T) (StatusBoard, jetstream.KeyValue, [][]byte, time.Time, string) {
	t.Helper()
	srv := natstest.Start(t).URL()
	lead, _, _ := leadMachine(t, srv, make(reporter, 1024), "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	kv := statusBucket(t, srv)
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	var banked [][]byte
	for range 2 {
		if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
			t.Fatal(err)
		}
		banked = append(banked, bank(t, kv, "carl"))
	}
	time.Sleep(100 * time.Millisecond) // carl publishes nothing more
	return board, kv, banked, time.Now(), srv
}

// TestKeyattack4BankedHeartbeatsKeepADeadMemberAlive (idea K3): while
// carl lives, the attacker covers two of his heartbeats with junk (the
// lead reads the one before), keeping the signed originals. Carl's
// machine then vanishes. Before DeadAfter runs out, the attacker puts
// the first banked heartbeat back: its stamp is later than any of
// carl's the lead accepted, so the lead takes it with a heartbeat seen
// now — carl alive for another DeadAfter, and so on for each banked one.
// A machine that vanished is to be reported within 30 s.
func TestKeyattack4BankedHeartbeatsKeepADeadMemberAlive(t *testing.T) {
	board, kv, banked, died, _ := bankedThenGone(t)
	for _, b := range banked {
		if _, err := kv.Put(t.Context(), "carl", b); err != nil {
			t.Fatal(err)
		}
		if _, seen := readSeen(t, board, "carl"); seen.After(died) {
			t.Fatalf("a heartbeat of carl's, hidden while he lived and put back after he died, is seen by the lead as new (%v after his death): he stays alive another DeadAfter", seen.Sub(died))
		}
	}
}

// TestKeyattack4BankedHeartbeatAfterTheDeadMark (idea K4): the same
// banked heartbeat put back after the lead marked carl dead. The stamp
// floor is per signer (the lead's mark does not raise carl's), but since
// keyfix4 the mark fences carl's key generation: carl stays dead.
func TestKeyattack4BankedHeartbeatAfterTheDeadMark(t *testing.T) {
	board, kv, banked, died, _ := bankedThenGone(t)
	if err := board.Put(t.Context(), "carl", statusOf("carl", "dead")); err != nil { // the lead marks him dead
		t.Fatal(err)
	}
	if state, _ := readSeen(t, board, "carl"); !strings.Contains(state, "dead") {
		t.Fatalf("the lead reads its own mark as %s", state)
	}
	if _, err := kv.Put(t.Context(), "carl", banked[1]); err != nil {
		t.Fatal(err)
	}
	if state, seen := readSeen(t, board, "carl"); !strings.Contains(state, "dead") {
		t.Fatalf("after the lead marked carl dead, a banked heartbeat of his makes him %s, seen %v after his death", state, seen.Sub(died))
	}
}

// TestKeyattack4RespawnOnASlowerClock (idea K5, no attacker): carl runs
// on a machine whose clock is a minute ahead, then is respawned on one
// whose clock is right (a new key, generation 2). Machines' clocks
// disagree — the board measures a heartbeat's age on the reader's clock
// for that reason — but the stamp floor compares carl's new stamps with
// the old machine's: the lead refuses every status of the live,
// respawned carl for a minute, as "an old status put back", and declares
// him dead meanwhile.
func TestKeyattack4RespawnOnASlowerClock(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, _, _ := leadMachine(t, srv, make(reporter, 1024), "carl")
	w1, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	w1.cfg.Now = func() time.Time { return time.Now().Add(time.Minute) }
	b1, err := w1.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b1.Put(t.Context(), "carl", statusOf("carl", "working on w1")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	w2, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl") // respawned: generation 2
	b2, err := w2.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Put(t.Context(), "carl", statusOf("carl", "working on w2")); err != nil {
		t.Fatal(err)
	}
	if state, _ := readSeen(t, board, "carl"); !strings.Contains(state, "w2") {
		t.Fatalf("the lead reads the respawned carl as %s: his live heartbeat refused (its clock is behind the first machine's)", state)
	}
}

// TestKeyattack4LeadStoppedPutBackToALaterTeammate (idea K6): the lead's
// session ends (its status "stopped", signed) and is resumed; the
// resumed lead publishes again and spawns carl on a worker. A bucket
// writer puts the old "stopped" back: carl's fresh board has no stamp
// floor, reads the lead stopped, and carl stops at once (the lead is
// gone when its status says stopped). keyfix4's generation fence covers
// members' statuses, not the lead's own.
func TestKeyattack4LeadStoppedPutBackToALaterTeammate(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, _, leadIn := leadMachine(t, srv, make(reporter, 1024), "carl")
	old := leadSaysStopped(t, lead, srv)
	lead, _ = reopenLead(t, lead, leadIn, make(reporter, 1024))
	if data := leadReadBySpawnedCarl(t, lead, srv, old); strings.Contains(data, "stopped") {
		t.Fatalf("carl's worker, spawned by the resumed lead, reads the lead as %s: carl would stop at once", data)
	}
}

// TestKeyattack4BankedLeadHeartbeatsKeepADeadLeadAlive (idea K3, the
// lead's side): the attacker hides two of the lead's heartbeats from
// carl's worker while the lead lives; the lead's machine vanishes; one
// banked heartbeat put back is taken by carl's board as new, so carl
// goes on working for another LeadDeadAfter per banked heartbeat: "a
// lead that vanishes stops its remote teammates within 30 s" fails.
func TestKeyattack4BankedLeadHeartbeatsKeepADeadLeadAlive(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, _, _ := leadMachine(t, srv, make(reporter, 1024), "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	kv := statusBucket(t, srv)
	if err := board.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, carlBoard, LeadName)
	if err := board.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
		t.Fatal(err)
	}
	banked := bank(t, kv, LeadName)
	time.Sleep(100 * time.Millisecond) // the lead's machine is gone
	gone := time.Now()
	if _, err := kv.Put(t.Context(), LeadName, banked); err != nil {
		t.Fatal(err)
	}
	if _, seen := readSeen(t, carlBoard, LeadName); seen.After(gone) {
		t.Fatalf("a heartbeat of the lead's, hidden while it lived and put back after it vanished, is seen by carl's worker as new (%v after): carl keeps working another LeadDeadAfter", seen.Sub(gone))
	}
}

// TestKeyattack4LeadStoppedFromAnEarlierTeam (idea K6, another trigger):
// Cohort keeps the keys under KeysRoot ($COHORT_HOME/remote/teams/{team}),
// which deleting a team leaves, so a team made again under the same name
// has the same lead key. The earlier team's last lead status ("stopped",
// signed) names only the team's name: put back in the new team's bucket,
// a teammate the new lead spawns reads its lead stopped.
func TestKeyattack4LeadStoppedFromAnEarlierTeam(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	old := leadSaysStopped(t, lead, srv)
	remadeWithCarl(t, lead, srv)
	if data := leadReadBySpawnedCarl(t, lead, srv, old); strings.Contains(data, "stopped") {
		t.Fatalf("carl's worker in the new team t reads the lead as %s, the earlier team's status: carl would stop at once", data)
	}
}

// TestKeyattack4TermsFromAnEarlierTeam (idea K6's trigger, on the lead's
// terms): an earlier team t, led with the same key (KeysRoot outlives a
// deleted team), let carl run in bypassPermissions without plan approval
// and allowed edits under /; the new team t requires carl's plan. The
// attacker puts the earlier team's file back (its terms signed by the
// same key, created earlier). A worker spawned in the new team, which
// has accepted no terms yet, must not read the earlier team's terms.
func TestKeyattack4TermsFromAnEarlierTeam(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.Update(t.Context(), "t", func(c *Config) error {
		c.Members[c.memberIndex("carl")].Mode = "bypassPermissions"
		c.TeamAllowedPaths = append(c.TeamAllowedPaths, AllowedPath{Path: "/**", ToolName: "Edit", AddedBy: LeadName, AddedAt: time.Now()})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	earlier := newAttacker(t, srv).file(t)
	remadeWithCarl(t, lead, srv)
	if _, err := lead.Update(t.Context(), "t", func(c *Config) error {
		c.Members[c.memberIndex("carl")].PlanModeRequired = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	newAttacker(t, srv).putFile(t, earlier)
	planRequired(t, "carl's worker", cw, "after the earlier team's file was put back")
	if tm, err := cw.Load("t"); err == nil && len(tm.Config.TeamAllowedPaths) > 0 {
		t.Errorf("carl's worker reads the earlier team's allowed paths %+v", tm.Config.TeamAllowedPaths)
	}
}

// homeLead is a lead's store as Cohort configures one (keys under
// KeysRoot, which deleting a team leaves) with team t made on srv.
func homeLead(t *testing.T, srv string) *Store {
	t.Helper()
	home := t.TempDir()
	lead, err := NewStore(StoreConfig{Root: home + "/teams", KeysRoot: home + "/remote/teams", Mailbox: make(reporter, 1024).config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lead.Close)
	if _, err := lead.Create(t.Context(), CreateSpec{Name: "t", NATS: srv}); err != nil {
		t.Fatal(err)
	}
	return lead
}

// remadeWithCarl deletes team t and makes it again, a little later, with
// member carl.
func remadeWithCarl(t *testing.T, lead *Store, srv string) {
	t.Helper()
	if err := lead.Delete(t.Context(), "t"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // a later creation time
	if _, err := lead.Create(t.Context(), CreateSpec{Name: "t", NATS: srv}); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
}

// leadReadBySpawnedCarl has the lead publish "working", spawns carl on a
// worker, runs before (an attacker's other moves), puts old (an earlier
// lead status) back in the bucket, and returns the lead's status as
// carl's fresh board reads it.
func leadReadBySpawnedCarl(t *testing.T, lead *Store, srv string, old []byte, before ...func()) string {
	t.Helper()
	b, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
		t.Fatal(err)
	}
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	for _, f := range before {
		f()
	}
	if _, err := statusBucket(t, srv).Put(t.Context(), LeadName, old); err != nil {
		t.Fatal(err)
	}
	cb, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	data, _, _, _ := cb.Get(t.Context(), LeadName)
	return string(data)
}

// leadSaysStopped has the lead of team t publish "stopped" (its session
// ends) and returns that signed status as the bucket holds it.
func leadSaysStopped(t *testing.T, lead *Store, srv string) []byte {
	t.Helper()
	b, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Put(t.Context(), LeadName, statusOf(LeadName, "stopped")); err != nil {
		t.Fatal(err)
	}
	e, err := statusBucket(t, srv).Get(t.Context(), LeadName)
	if err != nil {
		t.Fatal(err)
	}
	return e.Value()
}
