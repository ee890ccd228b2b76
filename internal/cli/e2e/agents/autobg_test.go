package agents

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAutoBackgroundMovesASlowSyncAgent: with auto_background_agents on, a
// synchronous subagent still running after auto_background_after_s is moved
// to the background: the lead's call returns async_launched, and the
// result arrives later as a notification.
func TestAutoBackgroundMovesASlowSyncAgent(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var launched string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "slow-job"):
			select {
			case <-release:
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return fakeapi.TextReply("slow result")
		case strings.Contains(first, "lead-start"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "slow", "prompt": "slow-job: take your time"})}}
			case 1:
				launched = r.LastToolResultText()
				close(release) // only now may the slow agent finish
				return fakeapi.TextReply("moved on")
			}
			if strings.Contains(r.LastUserText(), "slow result") {
				return fakeapi.TextReply("got the slow result")
			}
			return fakeapi.TextReply("waiting")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	out, errOut, code := h.Run("-p", "lead-start: delegate something slow", "--output-format", "json",
		"--flag", "auto_background_agents=on", "--flag", "auto_background_after_s=1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(launched, "running in the background") {
		t.Fatalf("the sync call should have become async_launched, got %q", launched)
	}
	if r := h.Result(out); r.Result != "got the slow result" {
		t.Fatalf("result = %+v", r)
	}
}
