package claude

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenRequest uses every feature the translation knows.
func goldenRequest() *llm.Request {
	temp := 0.5
	return &llm.Request{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 4096,
		System: []llm.Block{
			llm.Text("You are a careful engineer."),
			{Type: llm.BlockText, Text: "Project notes: <none> & nothing else.", Cache: true},
		},
		Tools: []llm.ToolDef{
			{Name: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {"file_path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}},
				"required": ["file_path"],
				"additionalProperties": false,
				"$schema": "http://json-schema.org/draft-07/schema#"
			}`)},
			{Name: "Bash", Description: "Runs a command.", InputSchema: json.RawMessage(`{"type":"object","required":["command"],"properties":{"timeout":{"type":"number"},"command":{"type":"string"}}}`), Cache: true},
		},
		Messages: []llm.Message{
			llm.UserText("Read main.go"),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Thinking: "The user wants the file.", Signature: "sig-abc=="},
				{Type: llm.BlockRedactedThinking, Data: "opaque-data"},
				llm.Text("Reading it."),
				llm.ToolUse("toolu_1", "Read", json.RawMessage(`{ "file_path" : "main.go" }`)),
				llm.ToolUse("toolu_2", "Bash", nil),
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				{Type: llm.BlockToolResult, ToolUseID: "toolu_1", Content: []llm.Block{
					llm.Text("package main"),
					{Type: llm.BlockImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
				}},
				{Type: llm.BlockToolResult, ToolUseID: "toolu_2", IsError: true, Content: []llm.Block{llm.Text("")}},
				{Type: llm.BlockImage, MediaType: "image/jpeg", Data: "/9j/4AAQ"},
				{Type: llm.BlockText, Text: "Now explain it.", Cache: true},
			}},
		},
		Thinking:    &llm.Thinking{BudgetTokens: 2048},
		Effort:      "high",
		Temperature: &temp,
		StopSeqs:    []string{"\n\nHuman:"},
	}
}

// TestRequestGolden shows byte for byte the body the SDK sends for a request
// that uses every feature: what prompt caching depends on.
func TestRequestGolden(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeSSE(w, textStream("ok")) })
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	req := goldenRequest()
	before := llm.CloneMessages(req.Messages)
	for i := 0; i < 2; i++ {
		if _, err := llm.Collect(m.Stream(t.Context(), req)); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.body(0)
	if !bytes.Equal(got, srv.body(1)) {
		t.Errorf("the same request gave different bytes:\n%s\n%s", got, srv.body(1))
	}
	if diff := cmp.Diff(before, req.Messages); diff != "" {
		t.Errorf("Stream changed the caller's messages (-before +after):\n%s", diff)
	}
	path := filepath.Join("testdata", "request.golden")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestRequestGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(bytes.TrimSuffix(want, []byte("\n"))), string(got)); diff != "" {
		t.Errorf("request body differs from %s (-want +got):\n%s", path, diff)
	}
	// The schema goes out as given, key order and unknown keywords included.
	mustContain(t, string(got), `"input_schema":{"type":"object","required":["command"],"properties":{"timeout":{"type":"number"},"command":{"type":"string"}}}`)
	mustContain(t, string(got), `"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"`)
	if n := strings.Count(string(got), `"cache_control"`); n != 3 {
		t.Errorf("body has %d cache_control markers, want 3", n)
	}
	h := srv.header(0)
	if got := h.Get("Authorization") + h.Get("X-Api-Key"); !strings.Contains(got, "sk-test") {
		t.Errorf("credential not sent; headers %v", h)
	}
}

// TestRequestFreshParams checks that a marker set for one request does not
// reach the next one built from the same history, and that encoding leaves
// the request as it was.
func TestRequestFreshParams(t *testing.T) {
	history := []llm.Message{llm.UserText("one")}
	first := &llm.Request{Model: "m", Messages: llm.CloneMessages(history)}
	first.Messages[0].Content[0].Cache = true
	before := llm.CloneMessages(first.Messages)
	b1, err := encodeRequest(first, &jsonenc.Cache{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	second := &llm.Request{Model: "m", Messages: history}
	b2, err := encodeRequest(second, &jsonenc.Cache{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b1), "cache_control") || strings.Contains(string(b2), "cache_control") {
		t.Errorf("marker leaked or went missing:\nfirst  %s\nsecond %s", b1, b2)
	}
	if diff := cmp.Diff(before, first.Messages); diff != "" {
		t.Errorf("encoding changed the request (-before +after):\n%s", diff)
	}
}

func TestRequestInvalid(t *testing.T) {
	marked := func(n int) *llm.Request {
		r := &llm.Request{Model: "m"}
		for i := 0; i < n; i++ {
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockText, Text: "x", Cache: true}}})
		}
		return r
	}
	nested := marked(4)
	nested.Messages[0].Content = append(nested.Messages[0].Content, llm.Block{
		Type: llm.BlockToolResult, ToolUseID: "t", Content: []llm.Block{{Type: llm.BlockText, Text: "r", Cache: true}}})
	msg := func(b ...llm.Block) *llm.Request {
		return &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: b}}}
	}
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"nil", nil, "nil request"},
		{"no model", &llm.Request{Messages: []llm.Message{llm.UserText("x")}}, "names no model"},
		{"five markers", marked(5), "5 cache breakpoints"},
		{"nested marker counts", nested, "5 cache breakpoints"},
		{"negative max tokens", &llm.Request{Model: "m", MaxTokens: -1}, "MaxTokens is -1"},
		{"system image", &llm.Request{Model: "m", System: []llm.Block{{Type: llm.BlockImage}}}, `system block 0 has type "image"`},
		{"bad schema", &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "T", InputSchema: json.RawMessage(`{"type":`)}}}, "tool 0 (T): input schema: not valid JSON"},
		{"schema not object", &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "T", InputSchema: json.RawMessage(`[1]`)}}}, "is not an object"},
		{"unnamed tool", &llm.Request{Model: "m", Tools: []llm.ToolDef{{}}}, "tool has no name"},
		{"bad role", &llm.Request{Model: "m", Messages: []llm.Message{{Role: "system", Content: []llm.Block{llm.Text("x")}}}}, `role "system"`},
		{"empty message", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser}}}, "message 0: user message has no content blocks"},
		{"bad tool input", msg(llm.ToolUse("t1", "T", json.RawMessage(`{"a":`))), "message 0: block 0 (tool_use): tool_use t1 input: not valid JSON"},
		{"unknown block", msg(llm.Block{Type: "video"}), `unknown block type "video"`},
		{"image without data", msg(llm.Block{Type: llm.BlockImage}), "image needs base64 Data"},
		{"result without id", msg(llm.Block{Type: llm.BlockToolResult}), "no tool_use_id"},
		{"result with tool_use", msg(llm.Block{Type: llm.BlockToolResult, ToolUseID: "t", Content: []llm.Block{llm.ToolUse("a", "b", nil)}}), "only text, image and tool_reference"},
		{"marker on thinking", msg(llm.Block{Type: llm.BlockThinking, Cache: true}), "cannot sit on a thinking block"},
		{"small budget", &llm.Request{Model: "m", MaxTokens: 4096, Thinking: &llm.Thinking{BudgetTokens: 10}}, "thinking budget 10"},
		{"budget over max", &llm.Request{Model: "m", MaxTokens: 2000, Thinking: &llm.Thinking{BudgetTokens: 2000}}, "below max_tokens (2000)"},
		{"empty thinking", &llm.Request{Model: "m", Thinking: &llm.Thinking{}}, "adaptive off"},
		{"bad effort", &llm.Request{Model: "m", Effort: "extreme"}, `effort "extreme"`},
		{"bad temperature", &llm.Request{Model: "m", Temperature: new(-0.5)}, "temperature -0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := encodeRequest(tt.req, &jsonenc.Cache{}, 0)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("encodeRequest error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRequestThinkingModes(t *testing.T) {
	tests := []struct {
		name     string
		thinking *llm.Thinking
		want     string
	}{
		{"off", nil, ""},
		{"budget", &llm.Thinking{BudgetTokens: 1024}, `"thinking":{"budget_tokens":1024,"type":"enabled"}`},
		{"adaptive", &llm.Thinking{Adaptive: true}, `"thinking":{"type":"adaptive"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeRequest(&llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("x")}, Thinking: tt.thinking}, &jsonenc.Cache{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if strings.Contains(string(b), "thinking") {
					t.Errorf("thinking sent when off: %s", b)
				}
				return
			}
			mustContain(t, string(b), tt.want)
			mustContain(t, string(b), `"max_tokens":8192`)
		})
	}
}
