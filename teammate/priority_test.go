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
	if n, _ := f.mbox.Pending("alice"); n != 0 {
		t.Errorf("alice got %d messages from a refused call", n)
	}
}
