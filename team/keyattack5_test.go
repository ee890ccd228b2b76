package team

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on keyfix5a's status board (kvboard.go: a status's order and
// age from the key's history as the server stored it, and each signer
// key's stamps) from outside (keyattack5, /work/notes/keyattack5-log.md):
// a NATS client with the run of the team's buckets, as issue 42's premise
// allows. Each test asserts the promise (A3's, once gated as an escape,
// holds since the board listens to the bucket: kvheard.go).

// statusStream is the attacker's JetStream handle and the name of team
// t's status bucket's stream.
func statusStream(t *testing.T, srv string) (jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	js, err := jetstream.New(newAttacker(t, srv).nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(t.Context(), "KV_COHORT_TEAM_t_STATUS")
	if err != nil {
		t.Fatal(err)
	}
	return js, st
}

// erasures are the ways a bucket writer erases a status key's history:
// one purge (a rollup message), or StatusHistory+1 junk puts (the doc's
// stated limit).
var erasures = []struct {
	name  string
	erase func(t *testing.T, kv jetstream.KeyValue, member string)
}{
	{"one purge", func(t *testing.T, kv jetstream.KeyValue, member string) {
		if err := kv.Purge(t.Context(), member); err != nil {
			t.Fatal(err)
		}
	}},
	{"StatusHistory+1 junk", func(t *testing.T, kv jetstream.KeyValue, member string) {
		for range StatusHistory + 1 {
			if _, err := kv.Put(t.Context(), member, []byte("junk")); err != nil {
				t.Fatal(err)
			}
		}
	}},
}

// erasedThenBanked: carl publishes three heartbeats, which the lead's
// board reads as they come and the attacker keeps (no junk needed: it
// reads them as a reader does); his machine vanishes and the lead marks
// him dead; the attacker erases the key's history and puts carl's last
// beat back. It returns the lead's store, inbox and board, and when carl
// died.
func erasedThenBanked(t *testing.T, erase func(*testing.T, jetstream.KeyValue, string)) (*Store, mailbox.Inbox, StatusBoard, time.Time) {
	t.Helper()
	srv := natstest.Start(t).URL()
	lead, _, leadIn := leadMachine(t, srv, make(reporter, 1024), "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	kv := statusBucket(t, srv)
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
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
	erase(t, kv, "carl")
	if _, err := kv.Put(t.Context(), "carl", banked); err != nil {
		t.Fatal(err)
	}
	return lead, leadIn, board, died
}

// TestKeyattack5HistoryErasedThenBankedToTheRunningLead (ideas A1, A2,
// the reader that read carl's beats): the running lead has his key's
// stamps and the server times of his entries; his last beat put back
// after the history was erased is not taken as new.
func TestKeyattack5HistoryErasedThenBankedToTheRunningLead(t *testing.T) {
	for _, c := range erasures {
		t.Run(c.name, func(t *testing.T) {
			_, _, board, died := erasedThenBanked(t, c.erase)
			if state, seen := readSeen(t, board, "carl"); !strings.Contains(state, "dead") && seen.After(died) {
				t.Fatalf("the running lead reads carl, dead and marked dead, as %s with a heartbeat %v after his death", state, seen.Sub(died).Round(time.Millisecond))
			}
		})
	}
}

// TestKeyattack5HistoryErasedThenBankedToAFreshReader (ideas A1, A2): the
// same, read by a fresh reader (the lead's session resumed): it must not
// read the dead carl as working with a heartbeat from after his death.
// With junk it is the doc's stated limit (more than StatusHistory puts
// "between two reads" — for a fresh reader, any time before its first);
// with a purge one message does it, and erases the lead's dead mark too.
func TestKeyattack5HistoryErasedThenBankedToAFreshReader(t *testing.T) {
	for _, c := range erasures {
		t.Run(c.name, func(t *testing.T) {
			lead, leadIn, _, died := erasedThenBanked(t, c.erase)
			lead2, _ := reopenLead(t, lead, leadIn, make(reporter, 1024))
			b2, err := lead2.Statuses("t")
			if err != nil {
				t.Fatal(err)
			}
			if state, seen, ok := readIfAny(t, b2, "carl"); ok && !strings.Contains(state, "dead") && seen.After(died) {
				t.Fatalf("the resumed lead reads carl, dead and marked dead, as %s with a heartbeat %v after his death", state, seen.Sub(died).Round(time.Millisecond))
			}
		})
	}
}

// TestKeyattack5HistorySetBackToOne (idea A3): a raw client does what
// the doc says an older Cohort does — sets the status bucket's history
// back to one entry per key (UpdateStream MaxMsgsPerSubject 1) — while
// the boards run, then covers each live beat of carl's with junk (K1):
// at once, from its own subscription to carl's key, under a flood of
// junk, and again after reading it. The shape is put back only at the
// lead's next read; what the lead heard published before that stands.
// The promise: a live member, beating, is not declared dead — the lead
// dates carl's status no earlier than his last beat.
func TestKeyattack5HistorySetBackToOne(t *testing.T) {
	srv := natstest.Start(t).URL()
	carlBoard, board, first := carlBeating(t, srv, make(reporter, 1024))
	js, st := statusStream(t, srv)
	cfg := st.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 1
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Skipf("the server refuses the change: %v", err)
	}
	kv := statusBucket(t, srv)
	a := newAttacker(t, srv)
	subject := "$KV." + kv.Bucket() + ".carl"
	if _, err := a.nc.Subscribe(subject, func(m *nats.Msg) {
		if string(m.Data) != "junk" {
			_ = a.nc.Publish(subject, []byte("junk"))
		}
	}); err != nil {
		t.Fatal(err)
	}
	flood, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-flood:
				return
			case <-time.After(time.Millisecond):
				_ = a.nc.Publish(subject, []byte("junk"))
			}
		}
	}()
	var last time.Time
	for range 3 {
		time.Sleep(50 * time.Millisecond)
		last = time.Now()
		if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
			t.Fatal(err)
		}
		bank(t, kv, "carl")
	}
	close(flood)
	<-done
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if data, seen := readSeen(t, board, "carl"); seen.Before(last) {
		t.Fatalf("carl beat 3 times since the lead first saw him, each covered by junk in a bucket set back to one entry per key: the lead dates his status (%s) %v after the first, before his last beat (%v after it): dead after DeadAfter, though alive",
			data, seen.Sub(first).Round(time.Millisecond), last.Sub(first).Round(time.Millisecond))
	}
}

// TestKeyattack5LeadStoppedFromAnEarlierTeamAfterAPurge (idea A5): K6b
// (keyattack4) with the new team's lead key purged first: the earlier
// team t's signed "stopped" of the same lead key (KeysRoot outlives a
// deleted team) is then the only entry, and a teammate the new lead
// spawns must not read its lead stopped.
func TestKeyattack5LeadStoppedFromAnEarlierTeamAfterAPurge(t *testing.T) {
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
		t.Fatalf("carl's worker in the new team t reads the lead as %s (the earlier team's, put back after a purge): carl would stop at once", data)
	}
}

// TestKeyattack5ClockSteppedBack (idea A10, no attacker): a machine
// starts with its clock a minute ahead (a VM resumed, before NTP), then
// NTP steps it back. The same key now stamps earlier than its first
// beat: the board must not date the live beats no later than the first
// and have the reader declare the writer dead meanwhile — carl read by
// the lead, or the lead read by carl's worker (which then stops).
func TestKeyattack5ClockSteppedBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		member string
		onLead bool
	}{{"carl read by the lead", "carl", false}, {"the lead read by carl's worker", LeadName, true}} {
		t.Run(c.name, func(t *testing.T) {
			srv := natstest.Start(t).URL()
			lead, _, _ := leadMachine(t, srv, make(reporter, 1024), "carl")
			cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
			var ahead atomic.Int64
			ahead.Store(int64(time.Minute))
			stepped := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
			writerStore, readerStore := cw, lead
			if c.onLead {
				writerStore, readerStore = lead, cw
			}
			writerStore.cfg.Now = stepped
			writer, err := writerStore.Statuses("t")
			if err != nil {
				t.Fatal(err)
			}
			reader, err := readerStore.Statuses("t")
			if err != nil {
				t.Fatal(err)
			}
			if err := writer.Put(t.Context(), c.member, statusOf(c.member, "working, clock ahead")); err != nil {
				t.Fatal(err)
			}
			_, first := readSeen(t, reader, c.member)
			ahead.Store(0) // NTP steps the clock back
			time.Sleep(50 * time.Millisecond)
			if err := writer.Put(t.Context(), c.member, statusOf(c.member, "working, clock right")); err != nil {
				t.Fatal(err)
			}
			if state, seen := readSeen(t, reader, c.member); !strings.Contains(state, "clock right") || !seen.After(first) {
				t.Fatalf("after %s's clock was stepped back a minute, the reader has %s, heartbeat dated %v before it first saw the writer: its live beats are dated no later than its first (stamped a minute ahead), so it ages as if silent until its clock passes it and is declared dead (or gone) though beating", c.member, state, first.Sub(seen).Round(time.Millisecond))
			}
		})
	}
}

// TestKeyattack5JunkFloodCost (idea A15): each new revision of a
// member's key costs every reader one history read. The attacker puts
// 2,000 junk entries over carl's key (each one put); carl then beats.
// The lead's board must read carl's live beat in a time of the order of
// the attacker's, not fall DeadAfter behind.
func TestKeyattack5JunkFloodCost(t *testing.T) {
	srv := natstest.Start(t).URL()
	carlBoard, board, _ := carlBeating(t, srv, make(reporter, 4096))
	kv := statusBucket(t, srv)
	const n = 2000
	start := time.Now()
	for range n {
		if _, err := kv.Put(t.Context(), "carl", []byte("junk")); err != nil {
			t.Fatal(err)
		}
	}
	attacker := time.Since(start)
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, after the flood")); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	state, _ := readSeen(t, board, "carl")
	reader := time.Since(start)
	t.Logf("attacker: %d junk puts in %v; the lead's next Get took %v", n, attacker.Round(time.Millisecond), reader.Round(time.Millisecond))
	if !strings.Contains(state, "after the flood") {
		t.Fatalf("after %d junk puts, the lead reads carl as %s", n, state)
	}
	if reader > 10*time.Second && reader > 2*attacker {
		t.Fatalf("after %d junk puts (%v for the attacker), the lead's board took %v to read carl's live beat", n, attacker, reader)
	}
}

// TestKeyattack5StatusStreamRemade (idea A13): the attacker deletes the
// status bucket's stream under the running boards and makes it again
// with the same shape (History StatusHistory). Carl, alive, beats again:
// the lead, whose reading of the key came from a watch of the old
// stream, must read his new beat, not age him as silent.
func TestKeyattack5StatusStreamRemade(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR := make(reporter, 1024)
	carlBoard, board, first := carlBeating(t, srv, leadR)
	js, st := statusStream(t, srv)
	cfg := st.CachedInfo().Config
	if err := js.DeleteStream(t.Context(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, after the stream was remade")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, seen, ok, err := board.Get(t.Context(), "carl")
		if err == nil && ok && strings.Contains(string(data), "remade") && seen.After(first) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after carl beat again in the remade bucket, the lead reads %s (ok %v, err %v), heartbeat %v old, with %d problem(s) reported: a live member ages as silent", data, ok, err, time.Since(seen).Round(time.Millisecond), len(leadR))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// carlBeating starts the lead's machine (its problems to r) and carl's on
// srv, has carl publish "working" and the lead read it; it returns carl's
// board, the lead's, and when the lead first saw that beat.
func carlBeating(t *testing.T, srv string, r reporter) (carlBoard, board StatusBoard, first time.Time) {
	t.Helper()
	lead, _, _ := leadMachine(t, srv, r, "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	board, err = lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
		t.Fatal(err)
	}
	_, first = readSeen(t, board, "carl")
	return carlBoard, board, first
}
