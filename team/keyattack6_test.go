package team

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/tasklist"

	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on keyfix6a's status board (kvboard.go, kvnext.go, kvshape.go:
// write times after an erasure, a fresh reader's first read, the earlier
// team's lead status refused, a remade stream) from outside (keyattack6,
// /work/notes/keyattack6-log.md): a NATS client with the run of the
// team's buckets and the JetStream API, as issue 42's premise allows.
// Every escape found here is fixed (fix42c); the tests run ungated.

// rewriteCreatedAt is the attacker's put of team t's file in the state
// bucket with createdAt set to ms (epoch milliseconds), every other
// field (the lead's signed terms included) as it was.
func rewriteCreatedAt(t *testing.T, srv string, ms int64) {
	t.Helper()
	a := newAttacker(t, srv)
	e, err := a.kv.Get(t.Context(), ConfigKey)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]json.RawMessage
	if err := json.Unmarshal(e.Value(), &file); err != nil {
		t.Fatal(err)
	}
	file["createdAt"] = json.RawMessage(strings.TrimSpace(string(must(json.Marshal(ms)))))
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.kv.Update(t.Context(), ConfigKey, data, e.Revision()); err != nil {
		t.Fatal(err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestKeyattack6EarlierTeamsStopWithCreatedAtRewritten (idea 2): keyfix6a
// refuses a lead status stamped before the team was made, "its file's
// createdAt". On NATS that is a field of the team file in the state
// bucket, which any client may write; the lead signs only the terms
// (modes, plan approval, allowed paths; Terms.Created is signed but
// Terms.apply does not put it back into the file's createdAt). The
// attacker purges team-lead's status key in the new team t, sets the
// file's createdAt to 1970 and puts the earlier team's signed "stopped"
// back: carl's fresh worker must not read its lead as stopped.
func TestKeyattack6EarlierTeamsStopWithCreatedAtRewritten(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	old := leadSaysStopped(t, lead, srv)
	remadeWithCarl(t, lead, srv)
	kv := statusBucket(t, srv)
	attack := func() {
		if err := kv.Purge(t.Context(), LeadName); err != nil {
			t.Fatal(err)
		}
		rewriteCreatedAt(t, srv, 1000)
	}
	if data := leadReadBySpawnedCarl(t, lead, srv, old, attack); strings.Contains(data, "stopped") {
		t.Fatalf("carl's worker in the new team t reads the lead as %s (the earlier team's, put back after a purge, the team file's createdAt set to 1970): carl would stop at once", data)
	}
}

// TestKeyattack6EarlierTeamsStopControl is the same attack without the
// createdAt rewrite (keyattack5's A5): it holds, so the rewrite is what
// the escape above needs.
func TestKeyattack6EarlierTeamsStopControl(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	old := leadSaysStopped(t, lead, srv)
	remadeWithCarl(t, lead, srv)
	kv := statusBucket(t, srv)
	purge := func() {
		if err := kv.Purge(t.Context(), LeadName); err != nil {
			t.Fatal(err)
		}
	}
	if data := leadReadBySpawnedCarl(t, lead, srv, old, purge); strings.Contains(data, "stopped") {
		t.Fatalf("control: carl's worker reads the lead as %s", data)
	}
}

// deletedThenGone: carl publishes a heartbeat the lead reads, then n
// more, each of which the attacker deletes from the stream (a message
// delete by sequence: no marker, no rollup, nothing for a reader to see)
// moments after it is stored, keeping the signed original; carl's
// machine then vanishes. It returns the lead's board, the banked beats
// and when carl died.
func deletedThenGone(t *testing.T, n int, leadR reporter) (StatusBoard, [][]byte, time.Time, string) {
	t.Helper()
	srv := natstest.Start(t).URL()
	_, _, carlBoard, board := leadAndCarl(t, srv, leadR)
	kv := statusBucket(t, srv)
	js, st := statusStream(t, srv)
	// A KV bucket's stream is made with DenyDelete, which no update may
	// cancel (err 10052): the attacker deletes the stream and makes it
	// again without it (keyattack5's A13, noticed by a reader that read
	// the stream before; this one is made before the lead reads carl).
	cfg := st.CachedInfo().Config
	cfg.DenyDelete = false
	if err := js.DeleteStream(t.Context(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	banked := bankEach(t, carlBoard, kv, "carl", n, func(rev uint64) error { return st.DeleteMsg(t.Context(), rev) })
	time.Sleep(300 * time.Millisecond) // carl publishes nothing more
	return board, banked, time.Now(), srv
}

// TestKeyattack6DeletedBeatsKeepADeadMemberAlive (ideas 7, 9; keyattack4's
// K3 with a message delete in place of junk): keyfix6a bounds a write
// time by the stamp plus the key's least latency only for an entry read
// after an erasure it can see (a delete or purge marker, junk, a refused
// entry, an overflow). A message deleted by sequence leaves none: the
// banked beat put back after carl died is dated when it was stored
// again, and each one keeps the dead carl alive another DeadAfter. A
// machine that vanished is to be reported within 30 s. (The control, the
// same beats hidden by junk instead, is keyattack4's
// TestKeyattack4BankedHeartbeatsKeepADeadMemberAlive.)
func TestKeyattack6DeletedBeatsKeepADeadMemberAlive(t *testing.T) {
	leadR := make(reporter, 1024)
	board, banked, died, srv := deletedThenGone(t, 3, leadR)
	kv := statusBucket(t, srv)
	for i, b := range banked {
		if i > 0 {
			time.Sleep(300 * time.Millisecond) // one DeadAfter each, in a real attack
		}
		if _, err := kv.Put(t.Context(), "carl", b); err != nil {
			t.Fatal(err)
		}
		if _, seen := readSeen(t, board, "carl"); seen.After(died) {
			t.Errorf("carl's beat %d, deleted from the stream while he lived and put back %v after he died, is seen by the lead %v after his death: he stays alive another DeadAfter per banked beat (%d problem(s) reported to the lead: %s)", i+1, time.Since(died).Round(time.Millisecond), seen.Sub(died).Round(time.Millisecond), len(leadR), drain(leadR))
		}
	}
}

// drain is what r holds, joined.
func drain(r reporter) string {
	var out []string
	for {
		select {
		case p := <-r:
			out = append(out, p.Reason)
		default:
			return strings.Join(out, " | ")
		}
	}
}

// TestKeyattack6StatusStreamLimitsUnderLiveBoards (idea 10): keyfix6a's
// read-time check puts back and reports only the bucket's entries per
// key; the stream's other limits are not read. The attacker sets the
// status stream to keep one message in all (MaxMsgs 1, Discard old): every put
// drops the bucket's other keys' entries, so carl's next beat is gone
// once the lead publishes its own status, before the lead reads it. A
// live carl ages as silent: the lead must read his beat, or be told the
// bucket no longer keeps it.
func TestKeyattack6StatusStreamLimitsUnderLiveBoards(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*jetstream.StreamConfig)
	}{
		{"one message in all", func(c *jetstream.StreamConfig) { c.MaxMsgs, c.Discard = 1, jetstream.DiscardOld }},
		{"a few hundred bytes in all", func(c *jetstream.StreamConfig) { c.MaxBytes, c.Discard = 600, jetstream.DiscardOld }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := natstest.Start(t).URL()
			leadR := make(reporter, 1024)
			carlBoard, board, first := carlBeating(t, srv, leadR)
			js, st := statusStream(t, srv)
			cfg := st.CachedInfo().Config
			c.set(&cfg)
			if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
				t.Skipf("the server refuses the change: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
			beat := time.Now()
			if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, second beat")); err != nil {
				t.Fatal(err)
			}
			if err := board.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
				t.Fatal(err)
			}
			data, seen, ok, err := board.Get(t.Context(), "carl")
			if err != nil || !ok {
				t.Fatalf("lead's Get(carl) = %s, %v, %v", data, ok, err)
			}
			if !strings.Contains(string(data), "second") && len(leadR) == 0 {
				t.Fatalf("carl beat again %v ago; the lead reads %s, heartbeat %v old (first seen %v ago), and nothing was reported: a live member ages as silent", time.Since(beat).Round(time.Millisecond), data, time.Since(seen).Round(time.Millisecond), time.Since(first).Round(time.Millisecond))
			}
		})
	}
}

// TestKeyattack6PurgeReadThenPutBack (ideas 1, 4; keyattack5's A1 to the
// running lead, with a read between): carl's beats after the one the
// lead read are each banked and purged by the attacker as they land
// (kv.Purge: a marker, which the lead's next read sees); carl's machine
// then vanishes. Later, before DeadAfter, the attacker puts one banked
// beat back, with no new purge. keyfix6a dates an entry by its stamp
// plus the key's least latency only when the erasure lies in the same
// read ("erased" is per scan): here it lay in the read before, so the
// beat is dated when it was put back, and each banked beat keeps the
// dead carl alive another DeadAfter.
func TestKeyattack6PurgeReadThenPutBack(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR := make(reporter, 1024)
	carlBoard, board, _ := carlBeating(t, srv, leadR)
	kv := statusBucket(t, srv)
	banked := bankEach(t, carlBoard, kv, "carl", 3, func(rev uint64) error { return kv.Purge(t.Context(), "carl") })
	readSeen(t, board, "carl")         // the lead's periodic read: it sees the purge markers
	time.Sleep(300 * time.Millisecond) // carl's machine is gone
	died := time.Now()
	for i, b := range banked {
		time.Sleep(300 * time.Millisecond) // one DeadAfter each, in a real attack
		if _, err := kv.Put(t.Context(), "carl", b); err != nil {
			t.Fatal(err)
		}
		if _, seen := readSeen(t, board, "carl"); seen.After(died) {
			t.Errorf("carl's beat %d, purged while he lived and put back %v after he died, is seen by the lead %v after his death (%d problem(s) reported)", i+1, time.Since(died).Round(time.Millisecond), seen.Sub(died).Round(time.Millisecond), len(leadR))
		}
	}
}

// TestKeyattack6PurgeReadThenPutBackKeepsADeadLeadAlive (idea 24): the
// same moves on team-lead's key, read by carl's worker: "a lead that
// vanishes stops its remote teammates within 30 s" — each banked beat of
// the vanished lead, put back after a read that saw its purge, keeps
// carl working another LeadDeadAfter.
func TestKeyattack6PurgeReadThenPutBackKeepsADeadLeadAlive(t *testing.T) {
	srv := natstest.Start(t).URL()
	_, _, carlBoard, leadBoard := leadAndCarl(t, srv, make(reporter, 1024))
	if err := leadBoard.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, carlBoard, LeadName)
	kv := statusBucket(t, srv)
	banked := bankEach(t, leadBoard, kv, LeadName, 3, func(rev uint64) error { return kv.Purge(t.Context(), LeadName) })
	readSeen(t, carlBoard, LeadName)
	time.Sleep(300 * time.Millisecond) // the lead's machine is gone
	died := time.Now()
	for i, b := range banked {
		time.Sleep(300 * time.Millisecond)
		if _, err := kv.Put(t.Context(), LeadName, b); err != nil {
			t.Fatal(err)
		}
		if _, seen := readSeen(t, carlBoard, LeadName); seen.After(died) {
			t.Errorf("the lead's beat %d, purged while it lived and put back %v after it vanished, is seen by carl's worker %v after: carl keeps working", i+1, time.Since(died).Round(time.Millisecond), seen.Sub(died).Round(time.Millisecond))
		}
	}
}

// createdAtOf is team t's file's createdAt as the state bucket holds it
// now (epoch ms).
func createdAtOf(t *testing.T, srv string) int64 {
	t.Helper()
	e, err := newAttacker(t, srv).kv.Get(t.Context(), ConfigKey)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		CreatedAt int64 `json:"createdAt"`
	}
	if err := json.Unmarshal(e.Value(), &file); err != nil {
		t.Fatal(err)
	}
	return file.CreatedAt
}

// TestKeyattack6EarlierTeamsTasksWithCreatedAtRewritten (idea 2b, same
// cause as the lead's "stopped" above): every signed task carries the
// team's creation time, so that an earlier team's tasks (same name, same
// lead key) are refused. A machine that joins takes that time from the
// team file's createdAt on the server, unsigned. The earlier team t had
// task #1 "drop the production table"; the new team t has its own task
// #1. The attacker sets the file's createdAt to the earlier team's and
// puts the earlier task list back before carl's worker joins: carl must
// not read the earlier team's instruction as his team's.
func TestKeyattack6EarlierTeamsTasksWithCreatedAtRewritten(t *testing.T) {
	earlierTasksPutBack(t, true)
}

// TestKeyattack6EarlierTeamsTasksControl: the earlier list put back
// without the createdAt rewrite is refused (the binding works).
func TestKeyattack6EarlierTeamsTasksControl(t *testing.T) {
	earlierTasksPutBack(t, false)
}

func earlierTasksPutBack(t *testing.T, rewrite bool) {
	t.Helper()
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	list, err := lead.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := list.Create(t.Context(), tasklist.TaskSpec{Subject: "drop the production table", Description: "earlier team"}); err != nil {
		t.Fatal(err)
	}
	oldTasks := newAttacker(t, srv).tasksEntry(t)
	oldMade := createdAtOf(t, srv)
	remadeWithCarl(t, lead, srv)
	if list, err = lead.Tasks("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := list.Create(t.Context(), tasklist.TaskSpec{Subject: "write the docs", Description: "this team"}); err != nil {
		t.Fatal(err)
	}
	if rewrite {
		rewriteCreatedAt(t, srv, oldMade)
	}
	newAttacker(t, srv).putTasks(t, oldTasks)
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	for _, tk := range listOf(t, cw) {
		if strings.Contains(tk.Subject, "production") {
			t.Fatalf("carl's worker, joined after the attacker put the earlier list back (createdAt set to the earlier team's: %v), reads the earlier team's task #%s %q as team t's", rewrite, tk.ID, tk.Subject)
		}
	}
}

// TestKeyattack6TwoBankedBeatsToAFreshReader (idea 4; keyattack5's A1
// with two beats): keyfix6a dates a lone entry above erased history (a
// signer key the reader has not seen before it) no later than its own
// stamp, and says "a live member's first beat after an erasure is dated
// so too (its next beat has evidence again)". The evidence for the next
// one is the first one's latency — here the first's put-back. carl beats
// three times, the attacker keeps each; carl dies, the lead marks him
// dead; the attacker purges carl's key and puts the last two beats back.
// The resumed lead must not read the dead carl as working now.
func TestKeyattack6TwoBankedBeatsToAFreshReader(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, leadIn, carlBoard, board := leadAndCarl(t, srv, make(reporter, 1024))
	kv := statusBucket(t, srv)
	var banked [][]byte
	for range 3 {
		if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
			t.Fatal(err)
		}
		readSeen(t, board, "carl")
		e, err := kv.Get(t.Context(), "carl")
		if err != nil {
			t.Fatal(err)
		}
		banked = append(banked, e.Value())
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // carl's machine is gone
	died := time.Now()
	if err := board.Put(t.Context(), "carl", statusOf("carl", "dead")); err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(t.Context(), "carl"); err != nil {
		t.Fatal(err)
	}
	for _, b := range banked[1:] {
		if _, err := kv.Put(t.Context(), "carl", b); err != nil {
			t.Fatal(err)
		}
	}
	lead2, _ := reopenLead(t, lead, leadIn, make(reporter, 1024))
	b2, err := lead2.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if state, seen, ok := readIfAny(t, b2, "carl"); ok && !strings.Contains(state, "dead") && seen.After(died) {
		t.Fatalf("the resumed lead reads carl, dead and marked dead, as %s with a heartbeat %v after his death (two of his beats put back over a purge)", state, seen.Sub(died).Round(time.Millisecond))
	}
}

// TestKeyattack6LeadStoppedFromAnEarlierSessionAfterAPurge (idea 2c):
// keyattack5's A5 without a new team: the lead's session ended (it
// published "stopped"), the same lead resumed team t and beats
// "working"; a teammate spawned now on a worker. The attacker purges
// team-lead's key and puts the earlier session's "stopped" back (signed
// after the team was made: the creation check does not apply). carl's
// fresh worker must not read its lead as stopped (carl would stop at
// once while the lead works).
func TestKeyattack6LeadStoppedFromAnEarlierSessionAfterAPurge(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead := homeLead(t, srv)
	if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: "carl"}); err != nil {
		t.Fatal(err)
	}
	old := leadSaysStopped(t, lead, srv)
	time.Sleep(20 * time.Millisecond) // the lead resumes the team
	kv := statusBucket(t, srv)
	purge := func() {
		if err := kv.Purge(t.Context(), LeadName); err != nil {
			t.Fatal(err)
		}
	}
	if data := leadReadBySpawnedCarl(t, lead, srv, old, purge); strings.Contains(data, "stopped") {
		t.Fatalf("carl's fresh worker reads the resumed lead as %s (its earlier session's, put back over a purge): carl would stop at once", data)
	}
}

// leadAndCarl starts the lead's machine of team t on srv (its problems
// to r) and carl's worker machine; it returns the lead's store and
// inbox, carl's status board and the lead's.
func leadAndCarl(t *testing.T, srv string, r reporter) (*Store, mailbox.Inbox, StatusBoard, StatusBoard) {
	t.Helper()
	lead, _, leadIn := leadMachine(t, srv, r, "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	return lead, leadIn, carlBoard, board
}

// bankEach has board publish n "working" statuses of member, 20 ms
// apart; the attacker keeps each signed entry and erases it at once
// (erase, given its revision). It returns the banked entries.
func bankEach(t *testing.T, board StatusBoard, kv jetstream.KeyValue, member string, n int, erase func(rev uint64) error) [][]byte {
	t.Helper()
	var banked [][]byte
	for range n {
		time.Sleep(20 * time.Millisecond)
		if err := board.Put(t.Context(), member, statusOf(member, "working")); err != nil {
			t.Fatal(err)
		}
		e, err := kv.Get(t.Context(), member)
		if err != nil {
			t.Fatal(err)
		}
		banked = append(banked, e.Value())
		if err := erase(e.Revision()); err != nil {
			t.Fatal(err)
		}
	}
	return banked
}

// TestKeyattack6LiveLeadPurgedAfterEachBeat (idea 25, denial): the
// attacker purges team-lead's key right after each of the live lead's
// beats (one kv.Purge each: a marker, which no reader reports). carl's
// worker reads only markers after the first beat: its lead ages as
// silent and, past LeadDeadAfter, carl stops while the lead works. The
// promise: a teammate stops when its lead vanished, not while it beats;
// carl's board must take a later beat, or be told the key is being
// erased.
func TestKeyattack6LiveLeadPurgedAfterEachBeat(t *testing.T) {
	srv := natstest.Start(t).URL()
	_, _, carlBoard, leadBoard := leadAndCarl(t, srv, make(reporter, 1024))
	if err := leadBoard.Put(t.Context(), LeadName, statusOf(LeadName, "working")); err != nil {
		t.Fatal(err)
	}
	_, first := readSeen(t, carlBoard, LeadName)
	kv := statusBucket(t, srv)
	bankEach(t, leadBoard, kv, LeadName, 10, func(uint64) error { return kv.Purge(t.Context(), LeadName) })
	if _, seen := readSeen(t, carlBoard, LeadName); !seen.After(first) {
		t.Fatalf("the lead beat 10 times more; each beat purged as it landed, carl's worker still dates its lead at the first beat (%v ago): a live lead ages as silent", time.Since(first).Round(time.Millisecond))
	}
}
