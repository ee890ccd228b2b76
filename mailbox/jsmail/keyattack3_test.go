package jsmail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go/jetstream"
)

// Attacks on session 8's live-inbox checks and seen-id record
// (keyattack3, /work/notes/keyattack3-log.md). Each test asserts the
// refusal. All that got through are fixed (keyfix3). Its attacks on the
// inbox's consumer (ideas 22-24: paused, a delivery cap, limits) have no
// target since the owner reads by its own cursor (issue 42, keyattack7).

// TestKeyattack3SeenRecordNotAFile (idea 11): the seen-id record's
// path is a directory (or the state directory a file): Open of the
// inbox fails naming the path, never reads without the record.
func TestKeyattack3SeenRecordNotAFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "alice.seen"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Config{StateDir: dir}, []string{"team-lead"}, "alice")
	if in, err := f.tr.OpenInbox(t.Context(), "alice"); err == nil || !strings.Contains(err.Error(), "alice.seen") {
		if in != nil {
			in.Close()
		}
		t.Fatalf("OpenInbox with a directory for the seen-id record = %v, want an error naming it", err)
	}
	file := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, Config{StateDir: file}, []string{"team-lead"}, "alice")
	if in, err := g.tr.OpenInbox(t.Context(), "alice"); err == nil || !strings.Contains(err.Error(), file) {
		if in != nil {
			in.Close()
		}
		t.Fatalf("OpenInbox with a file for the state directory = %v, want an error naming it", err)
	}
}

// TestKeyattack3SeenRecordHuge (idea 11): a seen-id record of 20,000
// old entries (a long-lived member) opens within seconds and is pruned.
func TestKeyattack3SeenRecordHuge(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	old := time.Now().Add(-time.Hour).UnixMilli()
	for i := range 20_000 {
		b.WriteString("id-" + strings.Repeat("x", 20) + "-" + itoa(i) + " " + itoa(int(old)) + " " + itoa(int(old)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "alice.seen"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Config{StateDir: dir}, []string{"team-lead"}, "alice")
	start := time.Now()
	in := f.open(t, "alice")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("opening with a 20,000-line seen-id record took %v", d)
	}
	next(t, in, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "after"}), "a huge seen-id record")
}

// TestKeyattack3StreamTransformUnderALiveInbox (idea 9): the attacker
// updates the live stream (not made anew) with a subject transform that
// stores bob's mail on alice's subject. Subjects, retention, window and
// limits are as they must be. Bob's open inbox must keep hearing or say
// it cannot.
func TestKeyattack3StreamTransformUnderALiveInbox(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice", "bob")
	bob := f.open(t, "bob")
	f.open(t, "alice")
	next(t, bob, f.send(t, mailbox.Message{From: "team-lead", To: "bob", Text: "before"}), "the first message")
	js := rawJS(t, f)
	info, err := f.tr.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	cfg.SubjectTransform = &jetstream.SubjectTransformConfig{Source: f.tr.inbox("bob"), Destination: f.tr.inbox("alice")}
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Skipf("the server refuses the change: %v", err)
	}
	m := f.send(t, mailbox.Message{From: "team-lead", To: "bob", Text: "after the transform"})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := bob.Receive(ctx)
	if err != nil && !errors.Is(err, mailbox.ErrDeaf) {
		t.Fatalf("bob heard nothing for 5 s after the stream was given a transform (%v); reports %v", err, f.pr.all())
	}
	if err == nil && got[0].ID != m.ID {
		t.Fatalf("bob got %+v", got[0])
	}
}
