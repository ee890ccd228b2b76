package jsmail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSeenLogKeepsWhatAReplayCouldPass: ids survive a reopen; a torn last
// line (a crash mid-write, its Ack never sent) is ignored; entries more
// than keep before the latest storing time are dropped at the next
// compaction, the rest kept.
func TestSeenLogKeepsWhatAReplayCouldPass(t *testing.T) {
	dir := t.TempDir()
	keep := 2 * time.Minute
	s, err := openSeen(dir, "alice", keep)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.UnixMilli(1_800_000_000_000)
	if err := s.add([]string{"old", "new"}, []seenEntry{{t0, t0, 0}, {t0.Add(keep), t0.Add(keep), 0}}, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.add([]string{"latest"}, []seenEntry{{t0.Add(keep + time.Second), t0.Add(keep + time.Second), 0}}, nil, 1); err != nil {
		t.Fatal(err)
	}
	s.close()
	f, err := os.OpenFile(filepath.Join(dir, "alice.seen"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("torn 17"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s, err = openSeen(dir, "alice", keep)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for id, want := range map[string]bool{"old": false, "new": true, "latest": true, "torn": false} {
		if s.has(id) != want {
			t.Errorf("has(%s) = %v after a reopen, want %v", id, !want, want)
		}
	}
}

// TestSeenLogRefusesABadLine: a line that is not "ID SENT STORED" stops
// the inbox from opening, naming the file and line and what to do.
func TestSeenLogRefusesABadLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "alice.seen")
	if err := os.WriteFile(path, []byte("a 1 2\nb one 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := openSeen(dir, "alice", time.Minute)
	if err == nil || !strings.Contains(err.Error(), path+":2:") || !strings.Contains(err.Error(), "delete the file if") {
		t.Fatalf("open with a bad line: %v, want its file:line and what to do", err)
	}
}

// TestOpenInboxWithoutStateDir: an inbox needs a place for its seen-id
// record; a Transport without one says so when an inbox is opened.
func TestOpenInboxWithoutStateDir(t *testing.T) {
	f := newFixture(t, Config{}, nil, "alice")
	cfg := f.tr.cfg
	cfg.StateDir = ""
	tr, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.OpenInbox(t.Context(), "alice"); err == nil || !strings.Contains(err.Error(), "Config.StateDir is empty") {
		t.Fatalf("open without a state dir: %v", err)
	}
}
