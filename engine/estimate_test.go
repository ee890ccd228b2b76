package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// bigTool answers every call with size bytes of text.
type bigTool struct{ size int }

func (b bigTool) Def() llm.ToolDef {
	return llm.ToolDef{Name: "Big", Description: "Returns a lot.", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (bigTool) Traits(json.RawMessage) tool.Traits { return tool.Traits{ReadOnly: true} }
func (b bigTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Text(strings.Repeat("x", b.size)), nil
}

// TestCompactionBeforeOversizedRequest: the model reports small usage on
// every response, so usage alone never calls for compaction; but one turn's
// tool results alone (4,000 bytes ≈ 1,000 tokens) cross the window (1,000
// tokens, threshold 80 %), and the engine compacts before sending them.
func TestCompactionBeforeOversizedRequest(t *testing.T) {
	var calls []string // "turn" or "summary", in order
	var afterSummary *llm.Request
	turns := 0
	model := replyFunc(func(req *llm.Request) *llm.Response {
		small := llm.Usage{InputTokens: 50, OutputTokens: 5}
		last := req.Messages[len(req.Messages)-1]
		if strings.Contains(llm.JoinText(last.Content), "about to be compacted") {
			calls = append(calls, "summary")
			return &llm.Response{Content: []llm.Block{llm.Text("SUMMARY")}, StopReason: llm.StopEndTurn, Usage: small}
		}
		calls = append(calls, "turn")
		if len(calls) > 1 && calls[len(calls)-2] == "summary" {
			afterSummary = req
		}
		turns++
		switch turns {
		case 1, 2:
			return &llm.Response{Content: []llm.Block{use("w"+string(rune('0'+turns)), "W", `{"v":"s"}`)}, StopReason: llm.StopToolUse, Usage: small}
		case 3:
			return &llm.Response{Content: []llm.Block{use("big", "Big", `{}`)}, StopReason: llm.StopToolUse, Usage: small}
		}
		return &llm.Response{Content: []llm.Block{llm.Text("done")}, StopReason: llm.StopEndTurn, Usage: small}
	})
	a := New(Config{Model: model, Tools: []tool.Tool{&probe{name: "W"}, bigTool{size: 4000}},
		Compaction: Compaction{ContextWindow: 1000, Threshold: 0.8, KeepRecent: 2}})
	res, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" {
		t.Fatalf("result %+v", res)
	}
	if diff := cmp.Diff([]string{"turn", "turn", "turn", "summary", "turn"}, calls); diff != "" {
		t.Fatalf("model calls (-want +got):\n%s", diff)
	}
	if afterSummary == nil || !strings.Contains(afterSummary.Messages[0].TextContent(), "SUMMARY") {
		t.Fatal("the request after the compaction does not start with the summary")
	}
	if got := lastToolResults(afterSummary); len(got) != 1 || got[0].ToolUseID != "big" {
		t.Fatalf("the request after the compaction should carry the big result, has %+v", got)
	}
}

func TestNextRequestTokens(t *testing.T) {
	text := func(n int) llm.Block { return llm.Text(strings.Repeat("a", n)) }
	img := llm.Block{Type: llm.BlockImage, MediaType: "image/png", Data: strings.Repeat("A", 1_000_000)}
	history := []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{text(4000 - blockOverhead)}},
		{Role: llm.RoleAssistant, Content: []llm.Block{text(400 - blockOverhead)}},
		{Role: llm.RoleUser, Content: []llm.Block{
			{Type: llm.BlockToolResult, ToolUseID: "t", Content: []llm.Block{text(800 - blockOverhead), img}},
		}},
	}
	// The tool_result block itself adds its overhead; the image counts flat.
	tail := (blockOverhead+800)/bytesPerToken + imageTokens
	tests := []struct {
		name     string
		lastSeen int64
		system   []llm.Block
		want     int64
	}{
		{"after a response: its usage plus what came since", 5000, nil, 5000 + int64(tail)},
		{"no response yet: everything", 0, nil, 1000 + 100 + int64(tail)},
		{"no response yet: the system prompt counts", 0, []llm.Block{text(4000 - blockOverhead)}, 1000 + 1000 + 100 + int64(tail)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Config{Model: replyFunc(nil), History: history, System: tt.system})
			a.lastSeen = tt.lastSeen
			if got := a.nextRequestTokens(); got != tt.want {
				t.Errorf("nextRequestTokens = %d, want %d", got, tt.want)
			}
		})
	}
}
