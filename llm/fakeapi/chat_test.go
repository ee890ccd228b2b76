package fakeapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// chatBody builds a streaming chat request around messages.
func chatBody(msgs ...map[string]any) map[string]any {
	return map[string]any{"model": "qwen3", "stream": true, "stream_options": map[string]any{"include_usage": true}, "messages": msgs,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "Bash", "parameters": map[string]any{"type": "object"}}}}}
}

// chatLines returns the data lines and comments of a chat stream.
func chatLines(t *testing.T, body []byte) (data []string, comments int) {
	t.Helper()
	for _, l := range strings.Split(string(body), "\n") {
		switch {
		case strings.HasPrefix(l, "data: "):
			data = append(data, strings.TrimPrefix(l, "data: "))
		case strings.HasPrefix(l, ": "):
			comments++
		case l != "":
			t.Fatalf("unexpected line %q", l)
		}
	}
	return data, comments
}

type chunk struct {
	Choices *[]struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int     `json:"index"`
				ID       *string `json:"id"`
				Function struct {
					Name      *string `json:"name"`
					Arguments string  `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

// quirkReply exercises every quirk: thinking, text with characters outside
// the BMP, and two parallel tool calls.
var quirkReply = Reply{Content: []Block{
	ThinkingBlock("Hmm 😀 ok", ""),
	TextBlock("Two calls 🙂 ü."),
	ToolUseBlock("", "Bash", map[string]string{"command": "echo 😀 ünïcode and more text"}),
	ToolUseBlock("", "Bash", map[string]string{"command": "ls -la /tmp/ö"}),
}}

// TestChatQuirks shows each quirk in the bytes of the stream.
func TestChatQuirks(t *testing.T) {
	tests := []struct {
		quirk Quirk
		check func(t *testing.T, lines []string, chunks []chunk, comments int)
	}{
		{"", func(t *testing.T, lines []string, chunks []chunk, comments int) {
			if lines[len(lines)-1] != "[DONE]" || finishes(chunks) != "tool_calls" || comments != 0 {
				t.Errorf("finish %q, last line %q, %d comments", finishes(chunks), lines[len(lines)-1], comments)
			}
			if u := chunks[len(chunks)-1]; u.Choices == nil || len(*u.Choices) != 0 || !strings.Contains(string(u.Usage), `"cached_tokens"`) {
				t.Errorf("last chunk %s is not the usage chunk with empty choices", lines[len(lines)-2])
			}
			if heads, pieces := toolChunks(chunks); heads != 2 || pieces < 4 {
				t.Errorf("%d tool call heads and %d argument pieces, want 2 heads and the arguments in pieces", heads, pieces)
			}
		}},
		{WholeToolCalls, func(t *testing.T, lines []string, chunks []chunk, _ int) {
			if heads, pieces := toolChunks(chunks); heads != 2 || pieces != 0 {
				t.Errorf("%d heads, %d pieces: want each call whole in one chunk", heads, pieces)
			}
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `"arguments":"{\"command\":\"ls -la /tmp/ö\"}"`) }) {
				t.Error("no chunk holds the whole arguments")
			}
		}},
		{StopForToolCalls, func(t *testing.T, _ []string, chunks []chunk, _ int) {
			if f := finishes(chunks); f != "stop" {
				t.Errorf("finish_reason %q", f)
			}
		}},
		{NoFinishReason, func(t *testing.T, _ []string, chunks []chunk, _ int) {
			if f := finishes(chunks); f != "" {
				t.Errorf("finish_reason %q", f)
			}
		}},
		{UsageOnFinish, func(t *testing.T, _ []string, chunks []chunk, _ int) {
			last := chunks[len(chunks)-1]
			if last.Choices == nil || len(*last.Choices) != 1 || (*last.Choices)[0].FinishReason == nil || len(last.Usage) < 10 {
				t.Errorf("last chunk %+v: want the usage on the finish chunk", last)
			}
		}},
		{UsageNullChoices, func(t *testing.T, lines []string, chunks []chunk, _ int) {
			if !strings.Contains(lines[len(lines)-2], `"choices":null,"usage":{`) {
				t.Errorf("usage chunk %s", lines[len(lines)-2])
			}
		}},
		{NoUsage, func(t *testing.T, lines []string, _ []chunk, _ int) {
			if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `"usage"`) }) {
				t.Error("usage sent")
			}
		}},
		{SplitUTF8, func(t *testing.T, lines []string, _ []chunk, _ int) {
			if !slices.ContainsFunc(lines, func(l string) bool { return !utf8.ValidString(l) }) {
				t.Error("no chunk carries half a UTF-8 sequence")
			}
		}},
		{SplitSurrogates, func(t *testing.T, lines []string, _ []chunk, _ int) {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `\ud83d"`) }) {
				t.Error("no chunk ends a string with the high half of a surrogate pair")
			}
		}},
		{InterleavedToolCalls, func(t *testing.T, _ []string, chunks []chunk, _ int) {
			var order []int
			for _, c := range chunks {
				if c.Choices != nil && len(*c.Choices) == 1 {
					for _, tc := range (*c.Choices)[0].Delta.ToolCalls {
						if tc.ID == nil {
							order = append(order, tc.Index)
						}
					}
				}
			}
			if len(order) < 4 || order[0] != 0 || order[1] != 1 || order[2] != 0 {
				t.Errorf("argument pieces by index %v, want them alternating", order)
			}
		}},
		{ReasoningField, func(t *testing.T, lines []string, _ []chunk, _ int) {
			joined := strings.Join(lines, "\n")
			if strings.Contains(joined, "reasoning_content") || !strings.Contains(joined, `"reasoning":`) {
				t.Error("thinking not sent as reasoning")
			}
		}},
		{NoDone, func(t *testing.T, lines []string, _ []chunk, _ int) {
			if slices.Contains(lines, "[DONE]") {
				t.Error("[DONE] sent")
			}
		}},
		{KeepAliveComments, func(t *testing.T, _ []string, _ []chunk, comments int) {
			if comments == 0 {
				t.Error("no comments")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.quirk)+"_", func(t *testing.T) {
			r := quirkReply
			if tt.quirk != "" {
				r.Quirks = []Quirk{tt.quirk}
			}
			srv := start(t, Config{Seed: 3, Policy: func(*Request) Reply { return r }})
			res := call(t, httpClient(t), srv.URL, "/v1/chat/completions", chatBody(user("go")))
			if res.Status != 200 || !strings.HasPrefix(res.Header.Get("content-type"), "text/event-stream") {
				t.Fatalf("status %d %s: %s", res.Status, res.Header.Get("content-type"), res.Body)
			}
			lines, comments := chatLines(t, res.Body)
			var chunks []chunk
			for _, l := range lines {
				if l == "[DONE]" {
					continue
				}
				var c chunk
				if err := json.Unmarshal([]byte(l), &c); err != nil {
					t.Fatalf("chunk %q: %v", l, err)
				}
				chunks = append(chunks, c)
			}
			tt.check(t, lines, chunks, comments)
		})
	}
}

func finishes(chunks []chunk) string {
	for _, c := range chunks {
		if c.Choices != nil && len(*c.Choices) == 1 && (*c.Choices)[0].FinishReason != nil {
			return *(*c.Choices)[0].FinishReason
		}
	}
	return ""
}

func toolChunks(chunks []chunk) (heads, pieces int) {
	for _, c := range chunks {
		if c.Choices == nil || len(*c.Choices) != 1 {
			continue
		}
		for _, tc := range (*c.Choices)[0].Delta.ToolCalls {
			if tc.ID != nil {
				heads++
			} else {
				pieces++
			}
		}
	}
	return heads, pieces
}

// TestChatTranslation: tool messages and the user message after them make
// one user message; the assistant's tool calls are tool_use blocks;
// reasoning_content is a thinking block.
func TestChatTranslation(t *testing.T) {
	srv := start(t, Config{})
	call := func(id, args string) map[string]any {
		return map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "Bash", "arguments": args}}
	}
	msgs := []map[string]any{
		{"role": "system", "content": "Be brief."},
		user("list"),
		{"role": "assistant", "content": nil, "reasoning_content": "Use ls.", "tool_calls": []any{call("c1", `{"command": "ls"}`), call("c2", `{"command":`)}},
		{"role": "tool", "tool_call_id": "c1", "content": "a.go"},
		{"role": "tool", "tool_call_id": "c2", "content": "bad input"},
		user([]any{map[string]any{"type": "text", "text": "and now?"}}),
	}
	res := call2(t, srv, chatBody(msgs...))
	if res.Status != 200 {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	req := srv.Requests()[0].Request
	type blk struct{ Type, Text, ID, Input string }
	var got [][]blk
	for _, m := range req.Messages {
		var bs []blk
		for _, b := range m.Content {
			bs = append(bs, blk{b.Type, b.Text + b.Thinking + joinText(b.Content), b.ID + b.ToolUseID, string(b.Input)})
		}
		got = append(got, bs)
	}
	want := [][]blk{
		{{"text", "list", "", ""}},
		{{"thinking", "Use ls.", "", ""}, {"tool_use", "", "c1", `{"command":"ls"}`}, {"tool_use", "", "c2", `"{\"command\":"`}},
		{{"tool_result", "a.go", "c1", ""}, {"tool_result", "bad input", "c2", ""}, {"text", "and now?", "", ""}},
	}
	if diff := cmp.Diff(want, got); diff != "" || req.SystemText() != "Be brief." || req.API != APIChat {
		t.Errorf("system %q api %q; messages (-want +got):\n%s", req.SystemText(), req.API, diff)
	}
}

func call2(t *testing.T, srv *Server, body any) result {
	return call(t, httpClient(t), srv.URL, "/v1/chat/completions", body)
}

// TestChatValidation: the fake refuses what OpenAI refuses, and what local
// servers' chat templates refuse, in OpenAI's error shape.
func TestChatValidation(t *testing.T) {
	srv := start(t, Config{})
	toolCall := map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "Bash", "arguments": "{}"}}}}
	tests := []struct {
		name string
		body any
		want string
	}{
		{"not json", `{"model":`, "not valid JSON"},
		{"no model", map[string]any{"messages": []any{user("x")}}, "model parameter"},
		{"no messages", map[string]any{"model": "m"}, "too short"},
		{"late system", chatBody(user("x"), map[string]any{"role": "system", "content": "s"}), "must come before"},
		{"orphan tool result", chatBody(user("x"), map[string]any{"role": "tool", "tool_call_id": "c9", "content": "r"}), "must be a response to a preceeding message"},
		{"wrong tool result", chatBody(user("x"), toolCall, map[string]any{"role": "tool", "tool_call_id": "c1", "content": "r"}, map[string]any{"role": "tool", "tool_call_id": "c9", "content": "r"}), "unexpected `tool_use_id`"},
		{"unanswered call", chatBody(user("x"), toolCall, user("y")), "without `tool_result`"},
		{"two assistants", chatBody(user("x"), assistant("a"), assistant("b")), "roles must alternate"},
		{"bad role", chatBody(map[string]any{"role": "robot", "content": "x"}), "Supported values"},
		{"bad tool name", with(chatBody(user("x")), "tools", []any{map[string]any{"type": "function", "function": map[string]any{"name": "bad name"}}}), "does not match pattern"},
		{"tool call without id", chatBody(user("x"), map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"type": "function", "function": map[string]any{"name": "Bash"}}}}), "needs an id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call2(t, srv, tt.body)
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			json.Unmarshal(res.Body, &e)
			if res.Status != 400 || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tt.want) {
				t.Errorf("%d %s, want 400 with %q", res.Status, res.Body, tt.want)
			}
		})
	}
}

// TestChatFaults: HTTP faults in OpenAI's shape, and the mid-stream ones.
func TestChatFaults(t *testing.T) {
	reply := func(f Fault) Policy {
		return func(*Request) Reply {
			return Reply{Content: []Block{TextBlock(strings.Repeat("words ", 40))}, Fault: &f}
		}
	}
	t.Run("html", func(t *testing.T) {
		srv := start(t, Config{Policy: reply(Fault{Kind: HTMLError})})
		res := call2(t, srv, chatBody(user("x")))
		if res.Status != 502 || res.Header.Get("content-type") != "text/html" || !strings.Contains(string(res.Body), "<title>502 Bad Gateway</title>") {
			t.Errorf("%d %s %s", res.Status, res.Header.Get("content-type"), res.Body)
		}
	})
	t.Run("error body", func(t *testing.T) {
		srv := start(t, Config{Policy: reply(Fault{Kind: ErrorBody, Message: "model crashed"})})
		res := call2(t, srv, chatBody(user("x")))
		if res.Status != 200 || string(res.Body) != `{"error":{"message":"model crashed","type":"server_error","param":null,"code":null}}`+"\n" {
			t.Errorf("%d %s", res.Status, res.Body)
		}
	})
	t.Run("stream error", func(t *testing.T) {
		srv := start(t, Config{Policy: reply(Fault{Kind: StreamError})})
		lines, _ := chatLines(t, call2(t, srv, chatBody(user("x"))).Body)
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"error":{"message":"Overloaded","type":"server_error"`) || len(lines) < 3 {
			t.Errorf("lines %q", lines)
		}
	})
	for _, kind := range []FaultKind{Stall, KeepAlive} {
		t.Run(string(kind), func(t *testing.T) {
			srv := start(t, Config{Policy: reply(Fault{Kind: kind})})
			// The deadline covers the headers generously (a loaded
			// machine under -race); the body is then read for five
			// keep-alive periods and closed: a stream that ends before
			// that fails the test, one that hangs is cut by the close.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			raw, _ := json.Marshal(chatBody(user("x")))
			req, _ := newRequest(t, srv.URL+"/v1/chat/completions", raw)
			resp, err := httpClient(t).Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			cut := make(chan struct{})
			timer := time.AfterFunc(5*KeepAliveEvery, func() { close(cut); resp.Body.Close() })
			data, err := io.ReadAll(resp.Body)
			timer.Stop()
			resp.Body.Close()
			select {
			case <-cut:
			default:
				t.Fatalf("the stream ended (%v) instead of hanging", err)
			}
			lines, comments := chatLines(t, trimPartial(data))
			if len(lines) == 0 || slices.Contains(lines, "[DONE]") || (kind == KeepAlive) != (comments > 0) {
				t.Errorf("%d lines, %d comments", len(lines), comments)
			}
			waitFor(t, func() bool { return srv.Requests()[0].Error != "" })
		})
	}
}

// trimPartial drops an incomplete last line.
func trimPartial(b []byte) []byte {
	if i := strings.LastIndex(string(b), "\n"); i >= 0 {
		return b[:i+1]
	}
	return nil
}

// waitFor polls cond for a short while (the server records its side after
// the client has gone).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestChatAuthAndScriptKeys(t *testing.T) {
	srv := start(t, Config{APIKey: "sk-right"})
	raw, _ := json.Marshal(chatBody(user("x")))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(string(raw)))
	req.Header.Set("authorization", "Bearer sk-wrong")
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("wrong key: %d", resp.StatusCode)
	}
	sc, err := ParseScript("q.yaml", []byte("- match: {api: chat}\n  quirks: [whole_tool_calls, no_done]\n  reply: hi\n- reply: other\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := sc.Policy()(&Request{API: APIChat})
	if diff := cmp.Diff([]Quirk{WholeToolCalls, NoDone}, got.Quirks); diff != "" {
		t.Errorf("quirks (-want +got):\n%s", diff)
	}
	if got := sc.Policy()(&Request{API: APIMessages}); got.Content[0].Text != "other" {
		t.Errorf("api match let a Messages request through: %+v", got)
	}
	for _, bad := range []string{"- quirks: [nope]\n  reply: x\n", "- match: {api: soap}\n  reply: x\n"} {
		if _, err := ParseScript("b.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "b.yaml:") {
			t.Errorf("script %q: error %v", bad, err)
		}
	}
	if _, err := Start(Config{Quirks: []Quirk{"nope"}}); err == nil {
		t.Error("Start accepted an unknown quirk")
	}
}
