package team

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
)

// TestStatusBucketShapePutBackAtARead: a client sets the status bucket
// back to one entry per key (what an older Cohort's open does) while the
// boards run; the lead's next read of a new status puts StatusHistory
// back and reports it, so junk over the beats after that read hides
// nothing.
func TestStatusBucketShapePutBackAtARead(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR := make(reporter, 1024)
	carlBoard, board, _ := carlBeating(t, srv, leadR)
	js, st := statusStream(t, srv)
	cfg := st.CachedInfo().Config
	cfg.MaxMsgsPerSubject = 1
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, one")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	leadR.reported(t, "the lead", []string{"keeps 1 entries per member", "put back to 64"})
	info, err := st.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxMsgsPerSubject != StatusHistory {
		t.Fatalf("after the lead's read the bucket keeps %d entries per key, want %d", info.Config.MaxMsgsPerSubject, StatusHistory)
	}
	// K1 after the read: junk over carl's next beat does not hide it.
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, two")); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	bank(t, statusBucket(t, srv), "carl")
	if state, seen := readSeen(t, board, "carl"); !strings.Contains(state, "two") || seen.Before(before.Add(-time.Second)) {
		t.Fatalf("carl's beat under junk, after the shape was put back: the lead reads %s seen %v before the junk", state, before.Sub(seen))
	}
}

// TestStatusStreamRemadeIsReported: the status bucket's stream deleted
// and made again under the running boards is reported to the lead, and
// an old status put back in the new stream is still old.
func TestStatusStreamRemadeIsReported(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR := make(reporter, 1024)
	carlBoard, board, _ := carlBeating(t, srv, leadR)
	kv := statusBucket(t, srv)
	e, err := kv.Get(t.Context(), "carl")
	if err != nil {
		t.Fatal(err)
	}
	old := e.Value()
	if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working, newer")); err != nil {
		t.Fatal(err)
	}
	readSeen(t, board, "carl")
	js, st := statusStream(t, srv)
	cfg := st.CachedInfo().Config
	if err := js.DeleteStream(t.Context(), cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), "carl", old); err != nil {
		t.Fatal(err)
	}
	if state, _ := readSeen(t, board, "carl"); !strings.Contains(state, "newer") {
		t.Fatalf("carl's first beat put back in the remade stream: the lead reads %s", state)
	}
	leadR.reported(t, "the lead", []string{"was deleted and made again"})
}
