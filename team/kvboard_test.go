package team

import (
	"testing"
	"time"

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
