package tui

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// rawRequests keeps the bodies of the requests a policy saw, for tests
// that check what the model was sent.
type rawRequests struct {
	mu   sync.Mutex
	list []string
}

func (r *rawRequests) add(req *fakeapi.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, string(req.Raw))
}

// find returns the first body holding want ("" when none does).
func (r *rawRequests) find(want string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.list {
		if strings.Contains(b, want) {
			return b
		}
	}
	return ""
}

// hideIDs replaces agent ids with a fixed one of the same width.
func hideIDs(scr string) string { return agentIDs.ReplaceAllString(scr, "a0000000000000000") }

// TestInterruptWhileASubagentWorks (issue 43 item 9): Esc while the lead
// waits for a synchronous subagent leaves one line, "interrupted by you",
// with no word about background agents (none runs); the next request
// tells the model the user stopped the Agent call.
func TestInterruptWhileASubagentWorks(t *testing.T) {
	g := newGate(1)
	var seen rawRequests
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		seen.add(r)
		switch {
		case strings.Contains(r.FirstUserText(), "SUB-SLOW"):
			if !g.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("slow done")
		case strings.Contains(r.LastUserText(), "AGAIN-NOW"):
			return fakeapi.TextReply("Starting over.")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "slow survey",
				"prompt": "SUB-SLOW survey everything", "subagent_type": "general-purpose"})}}
		}
		return fakeapi.TextReply("The survey came back.")
	})
	defer close(g.open)
	w.waitFor("default mode")
	w.typeText("survey the code")
	w.key("enter")
	g.await(t)
	w.waitFor("working · esc to interrupt", "◆ Agent(slow survey)")
	w.key("esc")
	scr := w.waitUntil("the turn ended", func(s string) bool {
		return strings.Contains(s, "interrupted by you") && !strings.Contains(s, "esc to interrupt")
	})
	w.golden("interrupt-subagent", scr)
	if n := strings.Count(strings.ToLower(scr), "interrupted"); n != 1 {
		t.Errorf("the screen says interrupted %d times, want once:\n%s", n, scr)
	}
	if strings.Contains(scr, "background") {
		t.Errorf("no background agent runs, but the screen mentions them:\n%s", scr)
	}
	w.typeText("AGAIN-NOW")
	w.key("enter")
	w.waitFor("Starting over.")
	body := seen.find("AGAIN-NOW")
	if !strings.Contains(body, "Interrupted by the user: they stopped your turn while Agent was running.") {
		t.Errorf("the request after the interrupt does not tell the model the user stopped the Agent call:\n%s", body)
	}
}

// TestInterruptWithABackgroundAgent (issue 43 item 9): with a background
// agent at work, the one interrupt line says it keeps running and that Esc
// again stops it; the second Esc asks.
func TestInterruptWithABackgroundAgent(t *testing.T) {
	bg, lead := newGate(1), newGate(1)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		switch {
		case strings.Contains(r.FirstUserText(), "BG-LONG"):
			if !bg.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("long done")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "long audit",
				"prompt": "BG-LONG audit it all", "subagent_type": "general-purpose", "run_in_background": true})}}
		case r.Turn() == 1:
			if !lead.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
		}
		return fakeapi.TextReply("ok")
	})
	defer close(lead.open)
	defer close(bg.open)
	w.waitFor("default mode")
	w.typeText("audit in the background")
	w.key("enter")
	bg.await(t)
	lead.await(t)
	w.waitFor("running in the background")
	w.key("esc")
	scr := w.waitUntil("the turn ended", func(s string) bool {
		return strings.Contains(s, "interrupted by you") && !strings.Contains(s, "esc to interrupt")
	})
	w.golden("interrupt-background", hideIDs(scr))
	if n := strings.Count(strings.ToLower(scr), "interrupted"); n != 1 {
		t.Errorf("the screen says interrupted %d times, want once:\n%s", n, scr)
	}
	if !strings.Contains(scr, "1 background agent still running (esc again to stop)") {
		t.Errorf("the interrupt line does not say the background agent runs on:\n%s", scr)
	}
	w.key("esc")
	w.waitFor("Stop 1 background agent(s) too? (y/n)")
	w.key("y")
	w.waitFor("stopped 1 agent(s)")
}
