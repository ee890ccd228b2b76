package mailbox

import (
	"testing"
)

func TestPendingCountsWhatTheReaderHasNotAcknowledged(t *testing.T) {
	d, _ := testDir(t, Config{}, "alice", "bob")
	ctx := t.Context()
	count := func() int {
		t.Helper()
		n, err := d.Pending(t.Context(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count(); got != 0 {
		t.Fatalf("empty inbox: pending %d", got)
	}
	var ids []string
	for _, txt := range []string{"one", "two", "three"} {
		m, err := d.Append(ctx, Message{From: "alice", To: "bob", Text: txt})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if got := count(); got != 3 {
		t.Fatalf("pending %d, want 3", got)
	}
	r, err := d.OpenReader("bob")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Read(ctx); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 3 {
		t.Fatalf("read but unacknowledged: pending %d, want 3", got)
	}
	if err := r.Ack(ctx, ids[2]); err != nil { // out of order
		t.Fatal(err)
	}
	if got := count(); got != 2 {
		t.Fatalf("after acking one out of order: pending %d, want 2", got)
	}
	if err := r.Ack(ctx, ids[0], ids[1]); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 0 {
		t.Fatalf("all acknowledged: pending %d, want 0", got)
	}
	if _, err := d.Pending(t.Context(), "nobody"); err == nil {
		t.Fatal("an unknown inbox should be an error")
	}
}
