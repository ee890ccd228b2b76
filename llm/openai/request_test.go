package openai

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenRequest uses every feature the translation knows.
func goldenRequest() *llm.Request {
	temp := 0.2
	return &llm.Request{
		Model:     "qwen3-coder",
		MaxTokens: 4096,
		System: []llm.Block{
			llm.Text("You are a careful engineer."),
			{Type: llm.BlockText, Text: "Project notes: <none> & nothing else.", Cache: true},
		},
		Tools: []llm.ToolDef{
			{Name: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {"file_path": {"type": "string"}, "offset": {"type": "integer", "minimum": 0}},
				"required": ["file_path"]
			}`)},
			{Name: "Bash", Description: "Runs a command.", InputSchema: json.RawMessage(`{"type":"object","required":["command"],"properties":{"command":{"type":"string"}}}`), Cache: true},
		},
		Messages: []llm.Message{
			llm.UserText("Read main.go"),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockThinking, Thinking: "The user wants the file.", ID: "rs_1", Signature: "enc-1"},
				llm.Text("Reading it."),
				llm.ToolUse("call_1", "Read", json.RawMessage(`{"file_path": "main.go"}`)),
				llm.ToolUse("call_2", "Bash", json.RawMessage(`"ls -l, not JSON"`)),
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				{Type: llm.BlockToolResult, ToolUseID: "call_1", Content: []llm.Block{
					llm.Text("package main"),
					{Type: llm.BlockImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
				}},
				{Type: llm.BlockToolResult, ToolUseID: "call_2", IsError: true, Content: []llm.Block{llm.Text("not valid JSON")}},
				{Type: llm.BlockText, Text: "Now explain it.", Cache: true},
			}},
		},
		Effort:      "high",
		Temperature: &temp,
		StopSeqs:    []string{"\n\nUser:"},
	}
}

// TestRequestGolden shows byte for byte the bodies sent for a request that
// uses every feature, in both protocols: what prefix caching depends on.
func TestRequestGolden(t *testing.T) {
	for _, api := range []API{Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			srv := fake(t, fakeapi.Config{})
			m := model(t, srv.URL, api, &waits{}, func(c *Config) { c.MaxTokensParam = MaxTokens })
			req := goldenRequest()
			before := llm.CloneMessages(req.Messages)
			for range 2 {
				respond(t, m, req)
			}
			got := srv.Requests()[0].Body
			if !bytes.Equal(got, srv.Requests()[1].Body) {
				t.Errorf("the same request gave different bytes:\n%s\n%s", got, srv.Requests()[1].Body)
			}
			if diff := cmp.Diff(before, req.Messages); diff != "" {
				t.Errorf("Stream changed the caller's messages (-before +after):\n%s", diff)
			}
			golden(t, string(api)+"_request.golden", got)
			if h := srv.Requests()[0].Request.Header.Get("Authorization"); h != "Bearer sk-test" {
				t.Errorf("Authorization %q", h)
			}
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
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
		t.Errorf("body differs from %s (-want +got):\n%s", path, diff)
	}
}

// TestPrefixGrowsByAppending: each turn's body starts with the previous
// turn's messages byte for byte, so a prefix cache keyed on the rendered
// conversation keeps hitting. A fork that copies the history sends the
// same prefix too.
func TestPrefixGrowsByAppending(t *testing.T) {
	for _, api := range []API{Chat, Responses} {
		t.Run(string(api), func(t *testing.T) {
			srv := fake(t, fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
				if r.Turn() < 2 {
					return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("step"), fakeapi.ToolUseBlock("", "Bash", map[string]string{"command": "ls <x>"})}}
				}
				return fakeapi.TextReply("done")
			}})
			m := model(t, srv.URL, api, &waits{}, nil)
			req := goldenRequest()
			req.Messages = req.Messages[:1]
			for range 3 {
				resp := respond(t, m, req)
				req.Messages = append(req.Messages, resp.Message())
				if uses := resp.Message().ToolUses(); len(uses) > 0 {
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(uses[0].ID, "a b", false)}})
				}
			}
			fork := *req
			fork.Messages = append(llm.CloneMessages(req.Messages[:3]), llm.UserText("fork: another task"))
			respond(t, m, &fork)
			recs := srv.Requests()
			for i := 1; i < len(recs); i++ {
				prev, cur := messagesPart(t, recs[i-1].Body), messagesPart(t, recs[i].Body)
				if !strings.HasPrefix(cur, prev) && i < 3 {
					t.Errorf("turn %d does not extend turn %d:\n%s\n%s", i+1, i, prev, cur)
				}
			}
			if forkMsgs, turn2 := messagesPart(t, recs[3].Body), messagesPart(t, recs[1].Body); !strings.HasPrefix(forkMsgs, turn2) {
				t.Errorf("the fork does not share turn 2's prefix:\n%s\n%s", turn2, forkMsgs)
			}
		})
	}
}

// messagesPart returns the body's conversation without its closing
// bracket: everything from the messages (input) array's start.
func messagesPart(t *testing.T, body []byte) string {
	t.Helper()
	s := string(body)
	for _, key := range []string{`"messages":[`, `"input":[`} {
		if i := strings.Index(s, key); i >= 0 {
			end := strings.Index(s, `],"tools"`)
			return s[i:end]
		}
	}
	t.Fatalf("no conversation in %s", body)
	return ""
}

func TestRequestInvalid(t *testing.T) {
	msg := func(role llm.Role, b ...llm.Block) *llm.Request {
		return &llm.Request{Model: "m", Messages: []llm.Message{{Role: role, Content: b}}}
	}
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"nil", nil, "nil request"},
		{"no model", &llm.Request{Messages: []llm.Message{llm.UserText("x")}}, "names no model"},
		{"negative max tokens", &llm.Request{Model: "m", MaxTokens: -1}, "MaxTokens is -1"},
		{"bad effort", &llm.Request{Model: "m", Effort: "extreme"}, `effort "extreme"`},
		{"bad temperature", &llm.Request{Model: "m", Temperature: new(2.5)}, "temperature 2.5"},
		{"system image", &llm.Request{Model: "m", System: []llm.Block{{Type: llm.BlockImage}}}, `system block 0 has type "image"`},
		{"bad schema", &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "T", InputSchema: json.RawMessage(`{"type":`)}}}, "tool 0 (T): input schema: not valid JSON"},
		{"unnamed tool", &llm.Request{Model: "m", Tools: []llm.ToolDef{{}}}, "tool has no name"},
		{"bad role", msg("system", llm.Text("x")), `role "system"`},
		{"empty message", msg(llm.RoleUser), "user message has no content blocks"},
		{"result without id", msg(llm.RoleUser, llm.Block{Type: llm.BlockToolResult}), "no tool_use_id"},
		{"tool use without id", msg(llm.RoleAssistant, llm.ToolUse("", "T", nil)), "needs an id and a name"},
		{"image without data", msg(llm.RoleUser, llm.Text("x"), llm.Block{Type: llm.BlockImage}), "image needs base64 Data"},
		{"user tool use", msg(llm.RoleUser, llm.Text("x"), llm.ToolUse("a", "b", nil)), "which a user message cannot carry"},
	}
	for _, tt := range tests {
		for _, api := range []API{Chat, Responses} {
			t.Run(tt.name+"/"+string(api), func(t *testing.T) {
				enc := encodeChat
				if api == Responses {
					enc = encodeResponses
				}
				_, err := enc(tt.req, &jsonenc.Cache{}, MaxTokens, 0)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error = %v, want one containing %q", err, tt.want)
				}
			})
		}
	}
}

// TestMaxTokensParam: OpenAI's own API gets max_completion_tokens, other
// servers no bound unless configured.
func TestMaxTokensParam(t *testing.T) {
	tests := []struct {
		base, param, want string
	}{
		{DefaultBaseURL, "", `"max_completion_tokens":4096`},
		{"http://localhost:8000/v1", "", ""},
		{"http://localhost:8000/v1", MaxTokens, `"max_tokens":4096`},
		{DefaultBaseURL, OmitMaxTokens, ""},
	}
	for _, tt := range tests {
		m, err := New(Config{APIKey: "k", BaseURL: tt.base, MaxTokensParam: tt.param})
		if err != nil {
			t.Fatal(err)
		}
		body, err := m.encode(ask("x"))
		if err != nil {
			t.Fatal(err)
		}
		if tt.want == "" && strings.Contains(string(body), "max_") || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s %q: body %s, want %q", tt.base, tt.param, body, tt.want)
		}
	}
}
