package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// TestAMessageWakesTheIdleLead: with the lead idle after its answer, a
// message from another session starts a turn the UI shows as it shows
// the user's: a line saying what woke the lead, the model's answer to the
// message (which its request holds, though nothing was typed), the turn's
// end; then a prompt typed by the user runs as before.
func TestAMessageWakesTheIdleLead(t *testing.T) {
	home, err := os.MkdirTemp("", "tuiwake") // a socket path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	w := newWorld(t, worldConfig{configure: func(c *cohort.Config) { c.Home = home }}, func(r *fakeapi.Request) fakeapi.Reply {
		last := r.LastUserText()
		switch {
		case strings.Contains(last, "NOTE-9"):
			return fakeapi.TextReply("Reviewed NOTE-9.")
		case strings.Contains(last, "one more"):
			return fakeapi.TextReply("One more done.")
		}
		return fakeapi.TextReply("Waiting for notes.")
	})
	w.waitFor("default mode")
	w.typeText("wait for notes")
	w.key("enter")
	w.waitFor("Waiting for notes.", "done in 1 turn")
	sock := filepath.Join(home, "sessions", w.sess.ID()+".sock")
	if _, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "NOTE-9 review the diff"}, sessionsock.Delivery{}); err != nil {
		t.Fatal(err)
	}
	scr := w.waitUntil("the woken turn's end", func(s string) bool {
		return strings.Contains(s, "a message from another session woke the lead") && strings.Contains(s, "Reviewed NOTE-9.") &&
			strings.Count(s, "done in 1 turn") == 2
	})
	if strings.Index(scr, "woke the lead") > strings.Index(scr, "Reviewed NOTE-9.") {
		t.Errorf("the woken turn's line comes after its answer:\n%s", scr)
	}
	w.typeText("one more")
	w.key("enter")
	w.waitUntil("the user's next turn", func(s string) bool {
		return strings.Contains(s, "One more done.") && strings.Count(s, "done in 1 turn") == 3
	})
}
