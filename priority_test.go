package cohort

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// TestAnotherSessionsMessagePriority: while the lead's turn waits on the
// model, another process sends three messages to the session's socket:
// "next", "later" and "now", in that order. At the turn's next step the
// model reads the "now" message before the "next" one and not the "later"
// one; the "later" message starts a turn of its own once that turn ends.
// A priority no receiver knows is refused with an error naming the three.
func TestAnotherSessionsMessagePriority(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	var mu sync.Mutex
	var seen []string // the last user text of each request after the first
	e.rt.on("take messages", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			if !g.wait(r) {
				return fakeapi.TextReply("cancelled")
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*.none"})}}
		}
		mu.Lock()
		seen = append(seen, r.LastUserText())
		mu.Unlock()
		return fakeapi.TextReply("read")
	})
	home, err := os.MkdirTemp("", "prio") // a socket path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := e.config()
	cfg.Home = home
	s := e.open(cfg)
	sock := filepath.Join(home, "sessions", s.ID()+".sock")
	done := make(chan []Event, 1)
	go func() { done <- collect(t, s, "take messages") }()
	g.await(t)
	for _, m := range []struct{ text, priority string }{{"NEXT-1", "next"}, {"LATER-1", "later"}, {"NOW-1", "now"}} {
		if _, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: m.text}, sessionsock.Delivery{Priority: m.priority}); err != nil {
			t.Fatalf("send %s: %v", m.text, err)
		}
	}
	_, err = sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "x"}, sessionsock.Delivery{Priority: "urgent"})
	if err == nil || !strings.Contains(err.Error(), "use now, next or later") {
		t.Errorf("priority urgent: %v", err)
	}
	close(g.open)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("want two more requests (the step with the messages, the later message's turn); got %q", seen)
	}
	step, later := seen[0], seen[1]
	now, next := strings.Index(step, "NOW-1"), strings.Index(step, "NEXT-1")
	if now < 0 || next < 0 || now > next || strings.Contains(step, "LATER-1") {
		t.Errorf("the turn's next step read %q; want NOW-1 before NEXT-1 and no LATER-1", step)
	}
	if !strings.Contains(later, "LATER-1") || strings.Contains(later, "NOW-1") {
		t.Errorf("the turn after read %q; want LATER-1 alone", later)
	}
}
