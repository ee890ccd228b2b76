package team

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
)

// TestStatusPurgeAndShapeReported: no Cohort purges a status key or
// makes the status stream lossy, so the lead is told of both — a purge
// marker over carl's beats (once), and a stream whose limits drop
// messages with no marker (its shape, which the read mends).
func TestStatusPurgeAndShapeReported(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR := make(reporter, 1024)
	carlBoard, board, _ := carlBeating(t, srv, leadR)
	kv := statusBucket(t, srv)
	if err := kv.Purge(t.Context(), "carl"); err != nil {
		t.Fatal(err)
	}
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	readSeen(t, board, "carl")
	if got := drain(leadR); strings.Count(got, "is a delete or purge") != 1 {
		t.Fatalf("the lead was told %q: want the purge of carl's key once", got)
	}
	js, st := statusStream(t, srv)
	cfg := st.CachedInfo().Config
	cfg.MaxAge = time.Hour
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	if got := drain(leadR); !strings.Contains(got, "messages dropped after 1h0m0s") || !strings.Contains(got, "is put back") {
		t.Fatalf("the lead was told %q: want the stream's max age reported and put back", got)
	}
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxAge != 0 {
		t.Fatalf("the status stream keeps max age %s after the lead's read: want it put back to none", info.Config.MaxAge)
	}
}

// readIfAny is member's status on board, if the board has one: a lone
// entry over an erasure is none to a fresh reader (kvboard.go).
func readIfAny(t *testing.T, board StatusBoard, member string) (string, time.Time, bool) {
	t.Helper()
	data, seen, ok, err := board.Get(t.Context(), member)
	if err != nil {
		t.Fatalf("board.Get(%s): %v", member, err)
	}
	return string(data), seen, ok
}

// TestFreshReaderAfterAPurgeTakesTheNextBeat: a lone beat above a purge
// is no status to a fresh reader (an earlier "stopped" put back so would
// stop a teammate); the live member's next beat, read with no erasure
// in its read, is its status, dated recently.
func TestFreshReaderAfterAPurgeTakesTheNextBeat(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, leadIn, carlBoard, _ := leadAndCarl(t, srv, make(reporter, 1024))
	if err := statusBucket(t, srv).Purge(t.Context(), "carl"); err != nil {
		t.Fatal(err)
	}
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
		t.Fatal(err)
	}
	lead2, _ := reopenLead(t, lead, leadIn, make(reporter, 1024))
	b2, err := lead2.Statuses("t")
	if err != nil {
		t.Fatal(err)
	}
	if state, _, ok := readIfAny(t, b2, "carl"); ok {
		t.Fatalf("a fresh reader takes carl's lone beat above a purge as his status %s", state)
	}
	before := time.Now()
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, next")); err != nil {
		t.Fatal(err)
	}
	state, seen, ok := readIfAny(t, b2, "carl")
	if !ok || !strings.Contains(state, "next") || seen.Before(before.Add(-time.Second)) {
		t.Fatalf("carl's next beat: the fresh reader reads %s (ok %v), seen %v before it was put: want it, recent", state, ok, before.Sub(seen))
	}
}
