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
