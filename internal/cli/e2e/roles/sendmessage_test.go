package roles

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestTheLeadAsksATeammateToShutDown: SendMessage's message may be a typed
// object in Claude Code 2.1.332's shape. The lead sends {type:
// "shutdown_request"} to idle alice, who approves and stops; the lead reads
// that. A teammate's shutdown_response without request_id is answered with
// the shape expected.
func TestTheLeadAsksATeammateToShutDown(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var leadSaw, bobSaw []string
	asked := false
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "mate-alice"):
			return fakeapi.TextReply("alice is done")
		case strings.Contains(first, "mate-bob"):
			if r.Turn() == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead",
					"message": map[string]any{"type": "shutdown_response", "approve": true}})}}
			}
			mu.Lock()
			bobSaw = append(bobSaw, r.LastToolResultText())
			mu.Unlock()
			return fakeapi.TextReply("bob is done")
		case strings.Contains(first, "lead two and stop one"):
			mu.Lock()
			defer mu.Unlock()
			leadSaw = append(leadSaw, strings.Join(newContent(r), "\n"), strings.Join(clitest.ToolResults(r), "\n"))
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "stoppers", "description": "d"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "a", "team_name": "stoppers", "name": "alice", "prompt": "mate-alice: work"}),
					clitest.Use("Agent", map[string]any{"description": "b", "team_name": "stoppers", "name": "bob", "prompt": "mate-bob: work"})}}
			}
			if !asked && strings.Contains(strings.Join(leadSaw, "\n"), "alice") && strings.Contains(strings.Join(leadSaw, "\n"), "idle") {
				asked = true
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "alice",
					"message": map[string]any{"type": "shutdown_request", "reason": "the work is done"}})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
	}
	h := clitest.New(t, policy)
	if out, errOut, code := h.Run("-p", "lead two and stop one", "--teammate-mode", "in-process"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	saw := strings.Join(leadSaw, "\n")
	if !asked {
		t.Fatalf("the lead never saw alice idle; it saw:\n%s", saw)
	}
	if !strings.Contains(saw, "Shutdown request sent to alice") {
		t.Errorf("the lead's shutdown_request was not sent; it saw:\n%s", saw)
	}
	if !strings.Contains(saw, "alice approved your shutdown request") {
		t.Errorf("the lead never read alice's approval; it saw:\n%s", saw)
	}
	if len(bobSaw) == 0 || !strings.Contains(bobSaw[0], `"request_id"`) || !strings.Contains(bobSaw[0], `"approve"`) || !strings.HasPrefix(bobSaw[0], "") {
		t.Errorf("bob's malformed shutdown_response got %q, want the expected shape", bobSaw)
	}
}
