package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestCtrlBTellsTheLead (issue 43 item 12): Ctrl+B moves the subagent the
// lead waits for to the background; the lead's tool result says the user
// moved it (not the run_in_background wording), and the subagent's system
// prompt says what messages reaching it look like.
func TestCtrlBTellsTheLead(t *testing.T) {
	sub := newGate(1)
	var seen rawRequests
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		seen.add(r)
		switch {
		case strings.Contains(r.FirstUserText(), "SUB-LONG"):
			if !sub.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("The long check passed.")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "long check",
				"prompt": "SUB-LONG check everything", "subagent_type": "general-purpose"})}}
		case r.Turn() == 1:
			return fakeapi.TextReply("Carrying on while it runs.")
		}
		return fakeapi.TextReply("The check is back.")
	})
	w.waitFor("default mode")
	w.typeText("check it")
	w.key("enter")
	sub.await(t)
	w.waitFor("◆ Agent(long check)", "running…")
	w.prog.Send(tea.KeyPressMsg{Code: 'b', Mod: tea.ModCtrl})
	moved := w.waitFor("Carrying on while it runs.")
	w.golden("background-by-user", hideIDs(moved))
	close(sub.open)
	w.waitFor("The check is back.", "done in")
	after := seen.find("The user moved this agent to the background while you were waiting for it")
	if after == "" {
		t.Errorf("no request told the lead that the user moved the agent to the background")
	}
	if strings.Contains(after, `"The agent is running in the background (agentId`) {
		t.Errorf("the lead's result for a moved agent uses the run_in_background wording")
	}
	subReq := seen.find("SUB-LONG check everything\"")
	if !strings.Contains(subReq, `Messages can reach you while you work`) || !strings.Contains(subReq, `\u003cteammate-message from=\"…\"\u003e`) {
		t.Errorf("the subagent's system prompt does not say what messages look like")
	}
}
