package fakeapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func respBody(input any) map[string]any {
	return map[string]any{"model": "gpt-test", "stream": true, "instructions": "Be brief.", "input": input,
		"tools": []any{map[string]any{"type": "function", "name": "Bash", "parameters": map[string]any{"type": "object"}}}}
}

func callResp(t *testing.T, srv *Server, body any) result {
	return call(t, httpClient(t), srv.URL, "/v1/responses", body)
}

// TestResponsesTranslation: reasoning, a message and function calls that
// follow one another are one assistant turn; outputs and the next user
// message are one user turn.
func TestResponsesTranslation(t *testing.T) {
	srv := start(t, Config{})
	input := []any{
		map[string]any{"role": "user", "content": "list"},
		map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{map[string]any{"type": "summary_text", "text": "Use ls."}}, "encrypted_content": "enc"},
		map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "Listing."}}},
		map[string]any{"type": "function_call", "call_id": "c1", "name": "Bash", "arguments": `{"command":"ls"}`},
		map[string]any{"type": "function_call_output", "call_id": "c1", "output": "a.go"},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "more"}}},
	}
	if res := callResp(t, srv, respBody(input)); res.Status != 200 {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	req := srv.Requests()[0].Request
	var got []string
	for _, m := range req.Messages {
		var parts []string
		for _, b := range m.Content {
			parts = append(parts, b.Type+":"+b.Text+b.Thinking+b.Signature+b.ID+b.ToolUseID+string(b.Input)+joinText(b.Content))
		}
		got = append(got, m.Role+" "+strings.Join(parts, " | "))
	}
	want := []string{
		"user text:list",
		`assistant thinking:Use ls.enc | text:Listing. | tool_use:c1{"command":"ls"}`,
		"user tool_result:c1a.go | text:more",
	}
	if diff := cmp.Diff(want, got); diff != "" || req.SystemText() != "Be brief." {
		t.Errorf("system %q; (-want +got):\n%s", req.SystemText(), diff)
	}
	for _, bad := range []struct {
		input any
		want  string
	}{
		{[]any{map[string]any{"type": "function_call_output", "call_id": "c9", "output": "x"}}, "unexpected `tool_use_id`"},
		{[]any{map[string]any{"role": "user", "content": "x"}, map[string]any{"role": "system", "content": "late"}}, "must come before"},
		{[]any{map[string]any{"type": "web_search_call"}}, "the fake reads message"},
		{nil, "Missing required parameter: 'input'"},
	} {
		res := callResp(t, srv, respBody(bad.input))
		if res.Status != 400 || !strings.Contains(string(res.Body), bad.want) {
			t.Errorf("input %v: %d %s, want %q", bad.input, res.Status, res.Body, bad.want)
		}
	}
}

// respEvents returns the names and data of a Responses stream.
func respEvents(t *testing.T, body []byte) ([]string, []map[string]any) {
	t.Helper()
	evs, err := readSSE(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var data []map[string]any
	for _, ev := range evs {
		var m map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil || m["type"] != ev.Name {
			t.Fatalf("event %s: %v %s", ev.Name, err, ev.Data)
		}
		names = append(names, ev.Name)
		data = append(data, m)
	}
	return names, data
}

func TestResponsesEnds(t *testing.T) {
	t.Run("max tokens", func(t *testing.T) {
		srv := start(t, Config{Policy: func(*Request) Reply { return Reply{Content: []Block{TextBlock("cut")}, StopReason: "max_tokens"} }})
		names, data := respEvents(t, callResp(t, srv, respBody("x")).Body)
		last := data[len(data)-1]["response"].(map[string]any)
		if names[len(names)-1] != "response.incomplete" || last["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" {
			t.Errorf("events %v, last %v", names, last)
		}
	})
	t.Run("stream error", func(t *testing.T) {
		srv := start(t, Config{Policy: func(*Request) Reply {
			return Reply{Content: []Block{TextBlock(strings.Repeat("a b ", 30))}, Fault: &Fault{Kind: StreamError}}
		}})
		names, data := respEvents(t, callResp(t, srv, respBody("x")).Body)
		last := data[len(data)-1]
		if names[len(names)-1] != "error" || last["code"] != "server_error" || last["message"] != "Overloaded" || len(names) < 4 {
			t.Errorf("events %v, last %v", names, last)
		}
	})
	t.Run("not streaming", func(t *testing.T) {
		srv := start(t, Config{Policy: func(*Request) Reply { return TextReply("whole") }})
		res := callResp(t, srv, with(respBody("x"), "stream", false))
		var r struct {
			Status string `json:"status"`
			Output []struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"output"`
		}
		if err := json.Unmarshal(res.Body, &r); err != nil || r.Status != "completed" || r.Output[0].Content[0].Text != "whole" {
			t.Errorf("%v %s", err, res.Body)
		}
	})
}
