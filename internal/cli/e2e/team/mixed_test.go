package team

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// localExplorer is an agent definition on the OpenAI chat provider.
const localExplorer = `---
name: local-explorer
description: Looks things up on a local model.
model: openai/qwen3-coder
tools: Bash
---
You look things up and report briefly.
`

// assistantLine is the part of a stream-json assistant line the tests read.
type assistantLine struct {
	Type    string `json:"type"`
	AgentID string `json:"agent_id"`
	Parent  string `json:"parent_tool_use_id"`
	Message struct {
		Model string     `json:"model"`
		Usage *llm.Usage `json:"usage"`
	} `json:"message"`
}

// mixedRun runs a lead on the Anthropic fake that asks local-explorer (on
// the OpenAI fake: the same server) to run a command, and returns the
// stream-json lines and the result.
func mixedRun(t *testing.T, settings string) (*clitest.Harness, []assistantLine, clitest.ResultLine) {
	t.Helper()
	c := clitest.NewConv()
	c.On("look it up", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "look up", "subagent_type": "local-explorer",
		"prompt": "explore-job: count the files"})), func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("the explorer said: " + strings.Join(clitest.ToolResults(r), ""))
	})
	c.On("explore-job", clitest.Calls(clitest.Use("Bash", map[string]any{"command": "echo three files"})), func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("explorer: " + strings.Join(clitest.ToolResults(r), ""))
	})
	h := clitest.New(t, c.Policy)
	h.Vars["OPENAI_BASE_URL"] = h.Srv.URL + "/v1"
	h.Write(".cohort/agents/local-explorer.md", localExplorer)
	if settings != "" {
		h.WriteUserSettings(settings)
	}
	out, errOut, code := h.Run("-p", "look it up", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash(echo:*)")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var lines []assistantLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var a assistantLine
		if json.Unmarshal([]byte(l), &a) == nil && a.Type == "assistant" {
			lines = append(lines, a)
		}
	}
	return h, lines, clitest.ParseStream(t, out).Result
}

// TestMixedProviders: a lead on the Anthropic API runs a subagent whose
// definition names a model on the OpenAI chat provider. Each agent's
// requests go to its provider, the output says which model each agent's
// messages came from, and the result reports usage and cost per model:
// the Claude model at its list price, the local model at nothing.
func TestMixedProviders(t *testing.T) {
	t.Parallel()
	h, lines, res := mixedRun(t, "")
	if !strings.Contains(res.Result, "explorer: three files") {
		t.Fatalf("result %q", res.Result)
	}
	paths := map[string][]string{}
	for _, rec := range h.Srv.Requests() {
		who := "lead"
		if strings.Contains(rec.Request.FirstUserText(), "explore-job") {
			who = "explorer"
		}
		paths[who] = append(paths[who], rec.Path+" "+rec.Request.Model)
	}
	if got := strings.Join(paths["lead"], ","); got != "/v1/messages claude-sonnet-5-5,/v1/messages claude-sonnet-5-5" {
		t.Errorf("the lead's requests: %s", got)
	}
	if got := strings.Join(paths["explorer"], ","); got != "/v1/chat/completions qwen3-coder,/v1/chat/completions qwen3-coder" {
		t.Errorf("the explorer's requests: %s", got)
	}
	models := map[string]string{} // agent → model
	for _, l := range lines {
		who := "lead"
		if l.Parent != "" {
			who = "explorer"
		}
		if prev, ok := models[who]; ok && prev != l.Message.Model {
			t.Errorf("%s's messages name models %s and %s", who, prev, l.Message.Model)
		}
		models[who] = l.Message.Model
	}
	if models["lead"] != "claude-sonnet-5-5" || models["explorer"] != "openai/qwen3-coder" {
		t.Errorf("models by agent %v", models)
	}
	claudeUse, local := res.ModelUsage["claude-sonnet-5-5"], res.ModelUsage["openai/qwen3-coder"]
	if claudeUse == nil || local == nil || len(res.ModelUsage) != 2 {
		t.Fatalf("modelUsage %v", res.ModelUsage)
	}
	want := llm.DefaultPrices.Cost("claude-sonnet-5-5", llm.Usage{InputTokens: claudeUse.InputTokens, OutputTokens: claudeUse.OutputTokens,
		CacheCreationInputTokens: claudeUse.CacheCreationInputTokens, CacheReadInputTokens: claudeUse.CacheReadInputTokens})
	if claudeUse.CostUSD <= 0 || math.Abs(claudeUse.CostUSD-want) > 1e-12 || local.CostUSD != 0 || local.InputTokens == 0 {
		t.Errorf("costs: claude %+v (want %v), local %+v", claudeUse, want, local)
	}
	if math.Abs(res.TotalCostUSD-claudeUse.CostUSD) > 1e-12 {
		t.Errorf("total cost %v, want the Claude model's %v", res.TotalCostUSD, claudeUse.CostUSD)
	}
}

// TestConfiguredLocalPrice: a price in the settings prices the local
// model.
func TestConfiguredLocalPrice(t *testing.T) {
	t.Parallel()
	_, _, res := mixedRun(t, `{"prices": {"openai/qwen3-coder": {"input": 1, "output": 2, "cache_read": 0.5}}}`)
	local := res.ModelUsage["openai/qwen3-coder"]
	if local == nil {
		t.Fatalf("modelUsage %v", res.ModelUsage)
	}
	want := (float64(local.InputTokens)*1 + float64(local.OutputTokens)*2 + float64(local.CacheReadInputTokens)*0.5) / 1e6
	if local.CostUSD <= 0 || math.Abs(local.CostUSD-want) > 1e-12 {
		t.Errorf("local cost %v, want %v", local.CostUSD, want)
	}
}
