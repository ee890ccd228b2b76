package bg

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAMessageWakesAnIdleBackgroundSession: a --bg session that has
// answered its prompt and gone idle reads a message another real session
// (a print-mode run) sends it with SendMessage, in a turn it starts by
// itself: its model's next request holds the message though nobody typed
// a prompt or attached, its log shows the answer, and its record goes
// back to idle with that answer as its detail. The sender is told the
// message was delivered.
func TestAMessageWakesAnIdleBackgroundSession(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sock, sent string
	rt := &clitest.Router{}
	rt.On("Wait for notes", func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "NOTE-42") {
			return fakeapi.TextReply("reviewed NOTE-42: looks right")
		}
		return fakeapi.TextReply("waiting for notes")
	})
	rt.On("send the note", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			mu.Lock()
			to := "uds:" + sock
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": to,
				"message": "NOTE-42 please review the diff", "options": map[string]any{"priority": "next"}})}}
		}
		mu.Lock()
		sent = strings.Join(clitest.ToolResults(r), "\n")
		mu.Unlock()
		return fakeapi.TextReply("sent")
	})
	h := newHarness(t, rt.Policy)
	id := startBG(t, h, "-n", "reviewer", "Wait for notes from other sessions and review them when they come.")
	rec := waitFor(t, h, id, "done", func(r bgsession.Record) bool {
		return r.State == bgsession.StateDone && r.SessionID != ""
	})
	mu.Lock()
	sock = filepath.Join(h.Vars["COHORT_HOME"], "sessions", rec.SessionID+".sock")
	mu.Unlock()
	before := len(clitest.ConvRequests(h.Srv, "Wait for notes"))

	out, errOut, code := h.RunBinary("-p", "--allowedTools", "SendMessage", "--", "send the note to the reviewer")
	if code != 0 {
		t.Fatalf("the sender: exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	if !strings.Contains(sent, "Message delivered") && !strings.Contains(sent, "Sent to the session") {
		t.Errorf("the sender's SendMessage result: %q", sent)
	}
	mu.Unlock()

	var woke *fakeapi.Request
	if !clitest.WaitFor(60*time.Second, func() bool {
		reqs := clitest.ConvRequests(h.Srv, "Wait for notes")
		for _, r := range reqs[min(before, len(reqs)):] {
			if strings.Contains(r.LastUserText(), "NOTE-42 please review the diff") {
				woke = r
				return true
			}
		}
		return false
	}) {
		logs, _, _ := h.Run("logs", id)
		t.Fatalf("the idle --bg session never read the message; log:\n%s", logs)
	}
	if !strings.Contains(woke.FirstUserText(), "Wait for notes") {
		t.Errorf("the message did not join the session's conversation: first user text %q", woke.FirstUserText())
	}
	done := waitFor(t, h, id, "idle after the woken turn", func(r bgsession.Record) bool {
		return r.State == bgsession.StateDone && strings.Contains(r.Detail, "reviewed NOTE-42")
	})
	if done.Status != bgsession.StatusIdle || !done.Alive {
		t.Errorf("after the woken turn: %+v", done)
	}
	logs, _, _ := h.Run("logs", id)
	if !strings.Contains(logs, "reviewed NOTE-42: looks right") {
		t.Errorf("the log lacks the woken turn's answer:\n%s", logs)
	}
}
