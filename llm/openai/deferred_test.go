package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// TestDeferredToolsAreSentOnceLoaded: the OpenAI protocols have no
// deferred loading, so a deferred tool stays out of the array until a
// tool_reference loads it; it then goes after every other tool (the array
// grows at its end), and the reference reads as text.
func TestDeferredToolsAreSentOnceLoaded(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	req := &llm.Request{Model: "m", Tools: []llm.ToolDef{
		{Name: "Bash", Description: "b", InputSchema: schema},
		{Name: "NotebookEdit", Description: "nb", InputSchema: schema, Defer: true},
		{Name: "ToolSearch", Description: "ts", InputSchema: schema},
		{Name: "EnterWorktree", Description: "wt", InputSchema: schema, Defer: true},
	}, Messages: []llm.Message{llm.UserText("edit the notebook")}}
	encoders := map[string]func(*llm.Request) ([]byte, error){
		"chat": func(r *llm.Request) ([]byte, error) {
			return encodeChat(r, new(jsonenc.Cache), "max_completion_tokens", 0)
		},
		"responses": func(r *llm.Request) ([]byte, error) {
			return encodeResponses(r, new(jsonenc.Cache), "max_output_tokens", 0)
		},
	}
	for name, encode := range encoders {
		t.Run(name, func(t *testing.T) {
			before, err := encode(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolOrder(string(before)); got != "Bash,ToolSearch" {
				t.Errorf("before loading, tools %s, want Bash,ToolSearch", got)
			}
			loaded := *req
			loaded.Messages = append(llm.CloneMessages(req.Messages),
				llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("c1", "ToolSearch", json.RawMessage(`{"query":"select:NotebookEdit"}`))}},
				llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "c1",
					Content: []llm.Block{llm.ToolReference("NotebookEdit")}}}})
			after, err := encode(&loaded)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolOrder(string(after)); got != "Bash,ToolSearch,NotebookEdit" {
				t.Errorf("after loading, tools %s, want Bash,ToolSearch,NotebookEdit", got)
			}
			if !strings.Contains(string(after), "Loaded NotebookEdit: it is in your tools now") {
				t.Errorf("the reference does not read as text:\n%s", after)
			}
		})
	}
}

// toolOrder lists the names of the body's tools in order.
func toolOrder(body string) string {
	var v struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return err.Error()
	}
	var names []string
	for _, t := range v.Tools {
		names = append(names, t.Name+t.Function.Name)
	}
	return strings.Join(names, ",")
}
