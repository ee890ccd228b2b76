package agents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// spender is an agent definition whose model never stops, with its own cap.
const spender = `---
name: spender
description: Works forever.
tools: Read
maxBudgetUsd: 0.05
---
You work.
`

// forever is a model that never ends its turn: a Read call every turn.
func forever(path string) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": path})}}
	}
}

// paid is what the fake API answered the conversations whose first user
// message holds marker ("" for all), at list price: the requests counted
// and their cost from the fake's records, not from Cohort's accounts, and
// the dearest single request.
func paid(t *testing.T, srv *fakeapi.Server, marker string) (n int, cost, dearest float64) {
	t.Helper()
	for _, rec := range srv.Requests() {
		if rec.Request == nil || rec.Status != 200 || !strings.Contains(rec.Request.FirstUserText(), marker) {
			continue
		}
		u := rec.Usage
		c := llm.DefaultPrices.Cost(rec.Request.Model, llm.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens),
			CacheCreationInputTokens: int64(u.CacheCreationInputTokens), CacheReadInputTokens: int64(u.CacheReadInputTokens)})
		n, cost, dearest = n+1, cost+c, max(dearest, c)
	}
	return n, cost, dearest
}

// atTheCap checks that spend stopped at cap: under it, and not a request
// early (the estimate may round a request up, so two requests' room).
func atTheCap(t *testing.T, who string, n int, cost, dearest, cap float64) {
	t.Helper()
	if n == 0 || cost > cap || cost+2*dearest < cap {
		t.Errorf("%s: %d requests cost $%.5f against a cap of $%.4f (the dearest $%.5f)", who, n, cost, cap, dearest)
	}
}

// TestCapStopsABackgroundAgent: a background agent whose model never stops
// is stopped by its definition's maxBudgetUsd before the request that
// would cross it, and the lead is told, in the task notification, which
// cap stopped it and what it spent.
func TestCapStopsABackgroundAgent(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	notes := h.Write("notes.txt", "notes\n")
	h.Write(".cohort/agents/spender.md", spender)
	rt.On("SPEND-bg", forever(notes))
	rt.On("LEAD-bg", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "spend", "subagent_type": "spender",
				"prompt": "SPEND-bg: work", "run_in_background": true})}}
		}
		return fakeapi.TextReply("noted")
	})
	out, errOut, code := h.Run("-p", "LEAD-bg: start the spender", "--output-format", "stream-json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	n, cost, dearest := paid(t, h.Srv, "SPEND-bg")
	atTheCap(t, "the background agent", n, cost, dearest, 0.05)
	// The lead was told: its last request carries the notification naming
	// the cap.
	leadReqs := clitest.ConvRequests(h.Srv, "LEAD-bg")
	last, _ := json.Marshal(leadReqs[len(leadReqs)-1].Messages)
	if !strings.Contains(string(last), `the budget of agent type \"spender\"`) || !strings.Contains(string(last), "It spent $0.0") {
		t.Errorf("the lead's last request does not name the cap:\n%s", last)
	}
	if res := clitest.ParseStream(t, out).Result; res.IsError {
		t.Errorf("result %+v", res)
	}
}

// TestSessionCapStopsEveryAgent: --max-budget-usd covers the whole
// session: two background agents that never stop and the lead together
// stop at it; each agent's notification names the session's budget, and
// the run's result is error_max_budget_usd. (The cap leaves room for the
// lead's first request, which carries every tool's definition.)
func TestSessionCapStopsEveryAgent(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	notes := h.Write("notes.txt", "notes\n")
	h.Write(".cohort/agents/worker.md", "---\nname: worker\ndescription: Works forever.\ntools: Read\n---\nYou work.\n")
	rt.On("SPEND-s", forever(notes))
	rt.On("LEAD-s", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			var calls []fakeapi.Block
			for i := range 2 {
				calls = append(calls, clitest.Use("Agent", map[string]any{"description": fmt.Sprintf("spend %d", i), "subagent_type": "worker",
					"prompt": fmt.Sprintf("SPEND-s %d: work", i), "run_in_background": true}))
			}
			return fakeapi.Reply{Content: calls}
		}
		return fakeapi.TextReply("noted")
	})
	out, errOut, code := h.Run("-p", "LEAD-s: start two workers", "--output-format", "stream-json", "--verbose", "--max-budget-usd", "0.10")
	if code == 0 && !strings.Contains(out, "error_max_budget_usd") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	n, cost, dearest := paid(t, h.Srv, "")
	atTheCap(t, "the session", n, cost, dearest, 0.10)
	s := clitest.ParseStream(t, out)
	if s.Result.Subtype != "error_max_budget_usd" || !strings.Contains(s.Result.Result, "the session's budget of $0.1000 is reached") {
		t.Errorf("result %+v", s.Result)
	}
	// The lead was told, though it could send nothing more: both
	// notifications are in its conversation for a later run.
	lead, err := filepath.Glob(filepath.Join(h.ProjectDir(), "*.jsonl"))
	if err != nil || len(lead) != 1 {
		t.Fatalf("lead transcripts %v %v", lead, err)
	}
	data, _ := os.ReadFile(lead[0])
	if told := strings.Count(string(data), "the session's budget of $0.1000 is reached"); told < 2 {
		t.Errorf("the lead's transcript names the session's cap %d times, want a notification per agent:\n%s", told, data)
	}
	if len(s.Tasks) == 0 {
		t.Error("no task events")
	}
}

// TestCapHoldsAcrossContinue: what a session spent persists, so a
// continued session with a cap below it sends nothing.
func TestCapHoldsAcrossContinue(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	notes := h.Write("notes.txt", "notes\n")
	rt.On("LEAD-c", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() < 3 {
			return forever(notes)(r)
		}
		return fakeapi.TextReply("done")
	})
	if out, errOut, code := h.Run("-p", "LEAD-c: read thrice", "--output-format", "json"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	n1, spent, _ := paid(t, h.Srv, "LEAD-c")
	cap := fmt.Sprintf("%.6f", spent*1.01)
	out, errOut, _ := h.Run("-p", "more", "--continue", "--output-format", "json", "--max-budget-usd", cap)
	if n2, _, _ := paid(t, h.Srv, ""); n2 != n1 {
		t.Errorf("the continued session sent %d requests over a cap it had spent", n2-n1)
	}
	res := h.Result(out)
	if res.Subtype != "error_max_budget_usd" || !strings.Contains(res.Result, "the session's budget") {
		t.Errorf("result %+v\n%s", res, errOut)
	}
}

// TestBadCaps: a cap that is not a positive number is an error naming the
// flag, the settings file and line, or the definition's file and line; a
// definition's cap above the session's is held to it, with a warning.
func TestBadCaps(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, clitest.NewConv().On("hello", clitest.Text("hi")).Policy)
	if _, errOut, code := h.Run("-p", "hello", "--max-budget-usd", "NaN"); code == 0 || !strings.Contains(errOut, "--max-budget-usd") {
		t.Errorf("--max-budget-usd NaN: exit %d, %s", code, errOut)
	}
	if _, errOut, code := h.Run("-p", "hello", "--max-budget-usd", "-1"); code == 0 || !strings.Contains(errOut, "--max-budget-usd") {
		t.Errorf("--max-budget-usd -1: exit %d, %s", code, errOut)
	}
	h.WriteUserSettings("{\n  \"maxBudgetUsd\": -2\n}")
	_, errOut, code := h.Run("-p", "hello")
	if code == 0 || !strings.Contains(errOut, "settings.json:2:") || !strings.Contains(errOut, "maxBudgetUsd: want a number of US dollars above 0") {
		t.Errorf("settings maxBudgetUsd -2: exit %d, %s", code, errOut)
	}
	h.WriteUserSettings(`{"teamMaxBudgetUsd": "lots"}`)
	if _, errOut, code := h.Run("-p", "hello"); code == 0 || !strings.Contains(errOut, "teamMaxBudgetUsd") {
		t.Errorf("settings teamMaxBudgetUsd \"lots\": exit %d, %s", code, errOut)
	}
	h.WriteUserSettings(`{}`)
	path := h.Write(".cohort/agents/bad.md", "---\nname: bad\ndescription: d\nmaxBudgetUsd: nope\n---\nx")
	h.Write(".cohort/agents/big.md", "---\nname: big\ndescription: d\nmaxBudgetUsd: 5\n---\nx")
	out, errOut, code := h.Run("-p", "hello", "--max-budget-usd", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, path+":4:") || !strings.Contains(errOut, "maxBudgetUsd: want a number of US dollars above 0") {
		t.Errorf("a bad definition cap is not reported at its line:\n%s", errOut)
	}
	if !strings.Contains(errOut, `agent type "big": its maxBudgetUsd of $5.00 is above the session's budget of $1.00; it is held to $1.00`) {
		t.Errorf("no clamp warning:\n%s", errOut)
	}
}
