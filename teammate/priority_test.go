package teammate

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
	"github.com/cohort-dev/cohort/tool"
)

// TestSendMessagePriorityTravelsWithTheMessage: the scripted lead sends
// to another session's socket with options.priority "later", and the
// other session's handler reads it with the message; options given for an
// agent of this session are refused, saying they are for another session,
// and an unknown priority fails the schema before anything is sent.
func TestSendMessagePriorityTravelsWithTheMessage(t *testing.T) {
	var mu sync.Mutex
	var results []string
	var sock string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch r.Turn() {
		case 0:
			return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "uds:" + sock, "message": "rebase when idle", "options": map[string]any{"priority": "later"}})
		case 1:
			results = append(results, r.LastToolResultText())
			return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "alice", "message": "hi", "options": map[string]any{"priority": "now"}})
		case 2:
			results = append(results, r.LastToolResultText())
			return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "uds:" + sock, "message": "hi", "options": map[string]any{"priority": "urgent"}})
		}
		results = append(results, r.LastToolResultText())
		return fakeapi.TextReply("sent")
	}
	f := newFixtureWith(t, policy, "alice")
	got := make(chan string, 4)
	ls, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: filepath.Join(f.cohortHome, "sessions"), SessionID: "p",
		Handler: func(ctx context.Context, m mailbox.Message) error {
			got <- m.Text + "/" + sessionsock.DeliveryFrom(ctx).Priority
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	mu.Lock()
	sock = ls.Path()
	mu.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := f.leadAgent.Engine().Send(ctx, []llm.Block{llm.Text("send it")}, ""); err != nil {
		t.Fatal(err)
	}
	close(got)
	var delivered []string
	for d := range got {
		delivered = append(delivered, d)
	}
	if len(delivered) != 1 || delivered[0] != "rebase when idle/later" {
		t.Errorf("the other session got %q, want the one message with priority later", delivered)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 3 || !strings.Contains(results[0], "delivered") ||
		!strings.Contains(results[1], "options.priority is for a message to another session") ||
		!strings.Contains(results[2], "urgent") {
		t.Errorf("the tool results: %q", results)
	}
	if n, _ := f.mbox.Pending(t.Context(), "alice"); n != 0 {
		t.Errorf("alice got %d messages from a refused call", n)
	}
}

// TestSendMessageNotifyWhenIdle: the scripted lead subscribes to another
// session with notify_when_idle and no message; the line names this
// session's own socket and delivers nothing. Asked for an agent of this
// session, or by a subagent, it is refused with what to do instead.
func TestSendMessageNotifyWhenIdle(t *testing.T) {
	var mu sync.Mutex
	var results []string
	var sock string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch r.Turn() {
		case 0:
			return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "uds:" + sock, "message": "", "notify_when_idle": true})
		case 1:
			results = append(results, r.LastToolResultText())
			return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "alice", "message": "hi", "notify_when_idle": true})
		}
		results = append(results, r.LastToolResultText())
		return fakeapi.TextReply("sent")
	}
	f := newFixtureWith(t, policy, "alice")
	dir := filepath.Join(f.cohortHome, "sessions")
	f.l.cfg.SessionsDir = dir
	got := make(chan sessionsock.Delivery, 4)
	froms := make(chan string, 4)
	ls, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: dir, SessionID: "p",
		Handler: func(ctx context.Context, m mailbox.Message) error {
			froms <- m.From
			got <- sessionsock.DeliveryFrom(ctx)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	mu.Lock()
	sock = ls.Path()
	mu.Unlock()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := f.leadAgent.Engine().Send(ctx, []llm.Block{llm.Text("tell me when it is idle")}, ""); err != nil {
		t.Fatal(err)
	}
	close(got)
	var ds []sessionsock.Delivery
	for d := range got {
		ds = append(ds, d)
	}
	if len(ds) != 1 || ds[0].NotifyIdle != filepath.Join(dir, "s.sock") || !ds[0].SubscribeOnly {
		t.Errorf("the other session got %+v; want one subscription naming %s", ds, filepath.Join(dir, "s.sock"))
	}
	close(froms)
	// Signed with an address the other session's model can answer, not
	// "team-lead", which names nothing there.
	for from := range froms {
		if want := "uds:" + filepath.Join(dir, "s.sock"); from != want {
			t.Errorf("the message is signed %q; want %q", from, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "one notice") || !strings.Contains(results[0], "the session at uds:"+sock+" (message id ") || !strings.Contains(results[1], "notify_when_idle is for another session") {
		t.Errorf("the tool results: %q", results)
	}
	// A name that is no session here (a print-mode session's -n names
	// nothing) is said to be none, not taken for an agent of this one.
	if res := f.send(t, f.lead, map[string]any{"to": "reviewer2", "message": "hi", "notify_when_idle": true}); !res.IsError ||
		!strings.Contains(res.TextOf(), `"reviewer2" names no session on this machine`) || !strings.Contains(res.TextOf(), "No other Cohort session runs on this machine.") {
		t.Errorf("notify_when_idle to a name that is no session: %q", res.TextOf())
	}
	sub := tool.Env{Caller: tool.Caller{ID: "a1", Kind: tool.KindSubagent, Depth: 1}}
	if res := f.send(t, sub, map[string]any{"to": "uds:" + sock, "message": "", "notify_when_idle": true}); !res.IsError || !strings.Contains(res.TextOf(), "main conversation only") {
		t.Errorf("a subagent's notify_when_idle: %q", res.TextOf())
	}
}
