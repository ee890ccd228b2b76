package team

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/nats-io/nats.go"
)

// TestBankedHeartbeatWithAForgedEntryTime: the board's freshness rests on
// the server's time of each entry. A raw client putting a banked heartbeat
// back can add its own Nats-Time-Stamp header (the time it was first
// stored) to the message; the server stores it and adds its own after it
// when it answers a direct get. The board must read the server's time,
// not the forged one: carl, dead, stays as old as his last beat.
func TestBankedHeartbeatWithAForgedEntryTime(t *testing.T) {
	board, _, banked, died, srv := bankedThenGone(t)
	nc, err := nats.Connect(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	m := nats.NewMsg("$KV.COHORT_TEAM_t_STATUS.carl")
	m.Data = banked[1]
	m.Header.Set("Nats-Time-Stamp", died.Add(-90*time.Millisecond).UTC().Format(time.RFC3339Nano))
	m.Header.Set("Nats-Sequence", "1")
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, seen := readSeen(t, board, "carl"); seen.After(died) {
		t.Fatalf("a banked heartbeat of carl's put back with a forged Nats-Time-Stamp header is seen as new (%v after his death)", seen.Sub(died))
	}
}

// TestFreshReaderLooksUpEachSignerOnce: a reader's first read of a key
// verifies its whole history (StatusHistory entries of a member that has
// beaten a while). Looking up the signer's key for each entry (a read of
// the team file and of its key grant, on the server) took seconds on a
// loaded machine; the age of what was read runs from the server's time
// read before them, so a live lead's heartbeat came out seconds old to a
// teammate spawned on another machine, which stopped ("the team's lead
// is gone"). The read asks the server about as much for 30 entries as
// for one.
func TestFreshReaderLooksUpEachSignerOnce(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, _, _ := leadMachine(t, srv, make(reporter, 1024), "carl")
	cw, _ := workerMachine(t, lead, srv, make(reporter, 1024), "carl")
	carlBoard, err := cw.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
			t.Fatal(err)
		}
	}
	board, err := lead.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	watch, err := nats.Connect(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	var asked atomic.Int64
	sub, err := watch.Subscribe("$JS.API.>", func(*nats.Msg) { asked.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := asked.Load(); n > 20 {
		t.Errorf("the lead's first read of carl's 30 statuses made %d JetStream API requests: a lookup per entry", n)
	}
	t.Logf("%d JetStream API requests", asked.Load())
}
