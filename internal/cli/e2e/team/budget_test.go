package team

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestTeamCapStopsATmuxTeammate: a teammate in its own process (a tmux
// pane) whose model never stops is stopped by the team's cap (the
// settings' teamMaxBudgetUsd), which it reads from the session's ledger
// that it shares with its lead: what its requests cost, counted from the
// fake API's records, stays under the cap and stops at it, and the lead is
// told in the teammate's idle notification which cap stopped it.
func TestTeamCapStopsATmuxTeammate(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	var h *clitest.Harness
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "CAPPED-job"):
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskList", map[string]any{})}}
		case strings.Contains(first, "LEAD-cap"):
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "capped"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "bob", "team_name": "capped",
					"name": "bob", "prompt": "CAPPED-job: work forever"})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h = clitest.New(t, policy)
	h.ShortHome()
	h.Vars["COHORT_TEAMMATE_BIN"] = bin
	h.WriteUserSettings(`{"teamMaxBudgetUsd": 0.05}`)
	out, errOut, code := h.Run("-p", "LEAD-cap: run a team", "--output-format", "json", "--teammate-mode", "tmux")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var n int
	var cost, dearest float64
	for _, rec := range h.Srv.Requests() {
		if rec.Request == nil || rec.Status != 200 || !strings.Contains(rec.Request.FirstUserText(), "CAPPED-job") {
			continue
		}
		u := rec.Usage
		c := llm.DefaultPrices.Cost(rec.Request.Model, llm.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens),
			CacheCreationInputTokens: int64(u.CacheCreationInputTokens), CacheReadInputTokens: int64(u.CacheReadInputTokens)})
		n, cost, dearest = n+1, cost+c, max(dearest, c)
	}
	if n == 0 || cost > 0.05 || cost+2*dearest < 0.05 {
		t.Errorf("the tmux teammate made %d requests costing $%.5f against the team's cap of $0.05 (dearest $%.5f)", n, cost, dearest)
	}
	var leadSaw strings.Builder
	for _, r := range clitest.ConvRequests(h.Srv, "LEAD-cap") {
		body, _ := json.Marshal(r.Messages)
		leadSaw.Write(body)
	}
	if !strings.Contains(leadSaw.String(), `team \"capped\"'s budget (teamMaxBudgetUsd in`) || !strings.Contains(leadSaw.String(), "capped") {
		t.Errorf("the lead was not told which cap stopped bob:\n%s", leadSaw.String())
	}
}
