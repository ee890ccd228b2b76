package roles

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAnUnblockedTaskWakesItsOwner: bob owns task #2, which waits for #1;
// when alice completes #1, idle bob is woken with one line naming #2.
func TestAnUnblockedTaskWakesItsOwner(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bobWoken []string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, last := r.FirstUserText(), r.LastUserText()
		switch {
		case strings.Contains(first, "mate-alice"):
			if strings.Contains(last, "go: complete task 1") && !strings.Contains(r.LastToolResultText(), "Updated task") {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})}}
			}
			return fakeapi.TextReply("alice waits")
		case strings.Contains(first, "mate-bob"):
			if r.Turn() > 0 {
				mu.Lock()
				bobWoken = append(bobWoken, last)
				mu.Unlock()
				return fakeapi.TextReply("bob starts the review")
			}
			return fakeapi.TextReply("bob waits")
		case strings.Contains(first, "run a blocked team"):
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "blocked", "description": "d"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "writer", "team_name": "blocked", "name": "alice", "prompt": "mate-alice: write"}),
					clitest.Use("Agent", map[string]any{"description": "reviewer", "team_name": "blocked", "name": "bob", "prompt": "mate-bob: review"})}}
			case 2:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("TaskCreate", map[string]any{"subject": "Write the test", "description": "write it"}),
					clitest.Use("TaskCreate", map[string]any{"subject": "Review the test", "description": "review it"})}}
			case 3:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("TaskUpdate", map[string]any{"taskId": "2", "addBlockedBy": []string{"1"}, "owner": "bob"}),
					clitest.Use("TaskUpdate", map[string]any{"taskId": "1", "owner": "alice"}),
					clitest.Use("SendMessage", map[string]any{"to": "alice", "message": "go: complete task 1", "summary": "go"})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
	}
	h := clitest.New(t, policy)
	if out, errOut, code := h.Run("-p", "run a blocked team", "--teammate-mode", "in-process"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bobWoken) == 0 {
		t.Fatal("bob, idle, was never woken when his task became free")
	}
	line := bobWoken[0]
	if !strings.Contains(line, "#2") || !strings.Contains(line, "unblocked") || strings.Count(strings.TrimSpace(stripTags(line)), "\n") > 0 {
		t.Errorf("bob was woken with %q, want one line naming task #2 as unblocked", line)
	}
}

// stripTags drops the <teammate-message …> wrapper around a message.
func stripTags(s string) string {
	if i := strings.Index(s, ">"); i >= 0 && strings.HasPrefix(strings.TrimSpace(s), "<") {
		s = s[i+1:]
	}
	return strings.TrimSuffix(strings.TrimSpace(s), "</teammate-message>")
}
