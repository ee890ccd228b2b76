package mailbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixedClock and counterIDs make appends deterministic.
func fixedClock() time.Time { return time.Date(2026, 5, 6, 7, 8, 9, 123_000_000, time.UTC) }

func counterIDs() func() string {
	n := 0
	return func() string {
		n++
		return "id-" + string(rune('a'+n-1))
	}
}

func TestAppendAssignsIDAndTimestamp(t *testing.T) {
	d, _ := testDir(t, Config{Now: fixedClock, NewID: counterIDs()}, "bob")
	got := mustAppend(t, d, Message{From: "alice", To: "bob", Text: "hello", Color: "blue"})
	want := Message{ID: "id-a", From: "alice", To: "bob", Text: "hello", Color: "blue", Timestamp: fixedClock()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Append result (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(filepath.Join(d.Path(), "bob.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wantLine := `{"id":"id-a","from":"alice","to":"bob","text":"hello","timestamp":"2026-05-06T07:08:09.123Z","color":"blue"}` + "\n"
	if diff := cmp.Diff(wantLine, string(data)); diff != "" {
		t.Errorf("inbox content (-want +got):\n%s", diff)
	}
	// A caller-supplied id and timestamp are kept.
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got = mustAppend(t, d, Message{ID: "resend-1", From: "alice", To: "bob", Text: "again", Timestamp: ts})
	if got.ID != "resend-1" || !got.Timestamp.Equal(ts) {
		t.Errorf("Append changed caller id/timestamp: %+v", got)
	}
}

func TestAppendUnknownRecipient(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	_, err := d.Append(t.Context(), Message{From: "bob", To: "carol", Text: "hi"})
	if !errors.Is(err, ErrUnknownRecipient) {
		t.Fatalf("Append to unregistered agent: %v, want ErrUnknownRecipient", err)
	}
	for _, name := range []string{"carol.jsonl", "carol.lock"} {
		if _, err := os.Stat(filepath.Join(d.Path(), name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a failed append (stat: %v); sending must never create an inbox", name, err)
		}
	}
	// Removed agents are unknown too, and re-registering works.
	if err := d.Remove(t.Context(), "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append(t.Context(), Message{From: "x", To: "bob", Text: "hi"}); !errors.Is(err, ErrUnknownRecipient) {
		t.Fatalf("Append after Remove: %v, want ErrUnknownRecipient", err)
	}
	if err := d.Register(t.Context(), "bob"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, d, Message{From: "x", To: "bob", Text: "back"})
}

func TestInvalidNamesRefused(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	ctx := t.Context()
	for _, name := range []string{"", "../bob", "a/b", "..", "/etc/passwd", "bob.jsonl", "bob\n"} {
		checks := map[string]error{
			"Register": d.Register(ctx, name),
			"Remove":   d.Remove(ctx, name),
		}
		_, checks["Append"] = d.Append(ctx, Message{From: "x", To: name, Text: "hi"})
		_, checks["OpenReader"] = d.OpenReader(name)
		_, checks["Watch"] = d.Watch(ctx, name)
		_, checks["Registered"] = d.Registered(name)
		for op, err := range checks {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("%s(%q) = %v, want ErrInvalidName", op, name, err)
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(d.Path()))
	if len(entries) != 1 {
		t.Errorf("files appeared beside the mailbox directory: %v", entries)
	}
}

func TestAppendRefusesInvalidMessages(t *testing.T) {
	d, _ := testDir(t, Config{MaxMessageBytes: 512}, "bob")
	tests := []struct {
		name string
		m    Message
		want string
	}{
		{"empty text", Message{From: "a", To: "bob"}, "text is empty"},
		{"empty from", Message{To: "bob", Text: "x"}, "from is empty"},
		{"bad id", Message{ID: "a b", From: "a", To: "bob", Text: "x"}, "id"},
		{"control in from", Message{From: "a\x1b", To: "bob", Text: "x"}, "control"},
		{"too big", Message{From: "a", To: "bob", Text: strings.Repeat("x", 600)}, "limit is 512"},
		{"invalid utf-8", Message{From: "a", To: "bob", Text: "\xff"}, "UTF-8"},
	}
	for _, tt := range tests {
		_, err := d.Append(t.Context(), tt.m)
		if !errors.Is(err, ErrInvalidMessage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Append = %v, want ErrInvalidMessage mentioning %q", tt.name, err, tt.want)
		}
	}
	if st, _ := os.Stat(filepath.Join(d.Path(), "bob.jsonl")); st.Size() != 0 {
		t.Errorf("refused messages reached the inbox (%d bytes)", st.Size())
	}
}

func TestRegisterIsIdempotentAndKeepsMessages(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	mustAppend(t, d, Message{From: "a", To: "bob", Text: "keep me"})
	if err := d.Register(t.Context(), "bob"); err != nil {
		t.Fatal(err)
	}
	if err := d.Register(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, d, "bob")
	msgs, err := r.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"keep me"}, texts(msgs)); diff != "" {
		t.Errorf("messages after re-register (-want +got):\n%s", diff)
	}
	agents, err := d.Agents()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alice", "bob"}, agents); diff != "" {
		t.Errorf("Agents (-want +got):\n%s", diff)
	}
	for name, want := range map[string]bool{"bob": true, "carol": false} {
		if got, err := d.Registered(name); err != nil || got != want {
			t.Errorf("Registered(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}

func TestAppendWaitsForLockWithDeadline(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	lk, err := lockPath(t.Context(), d.lockFile("bob"), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err = d.Append(ctx, Message{From: "a", To: "bob", Text: "blocked"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Append while locked = %v, want DeadlineExceeded", err)
	}
	if !strings.Contains(err.Error(), "bob.lock") {
		t.Errorf("error %q does not name the lock file", err)
	}
	lk.Unlock()
	mustAppend(t, d, Message{From: "a", To: "bob", Text: "now"})
}

func TestAppendTerminatesTornLine(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	path := filepath.Join(d.Path(), "bob.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"x","from":"a","to":"bo`), 0o600); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, d, Message{ID: "m2", From: "a", To: "bob", Text: "after", Timestamp: fixedClock()})
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 || lines[0] != `{"id":"x","from":"a","to":"bo` {
		t.Fatalf("inbox lines %q: want the torn line terminated, then the new one", lines)
	}
	if _, err := ParseLine([]byte(lines[1])); err != nil {
		t.Errorf("new line does not parse: %v", err)
	}
}

func TestSymlinkedInboxRefused(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("precious\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(d.inboxPath("bob"))
	if err := os.Symlink(target, d.inboxPath("bob")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Append(t.Context(), Message{From: "eve", To: "bob", Text: "redirected?"}); err == nil {
		t.Fatal("Append through a symlinked inbox succeeded")
	}
	if _, err := d.OpenReader("bob"); err == nil {
		t.Fatal("OpenReader through a symlinked inbox succeeded")
	}
	if data, _ := os.ReadFile(target); string(data) != "precious\n" {
		t.Errorf("symlink target changed: %q", data)
	}
}
