package fakeapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func cc() map[string]any { return map[string]any{"type": "ephemeral"} }

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func toolUse(id, name string) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}
}

func toolResult(id, content string) map[string]any {
	return map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}
}

func schemaTool(name string) map[string]any {
	return map[string]any{"name": name, "description": "d", "input_schema": map[string]any{"type": "object"}}
}

func with(b map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range b {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func TestValidation(t *testing.T) {
	ok := body(user("hi"))
	marked := func(n int) map[string]any {
		var blocks []any
		for i := range n {
			blocks = append(blocks, map[string]any{"type": "text", "text": fmt.Sprint("part ", i), "cache_control": cc()})
		}
		return body(user(blocks))
	}
	tests := []struct {
		name string
		body any
		want string // substring of the error message; "" means accepted
	}{
		{"valid", ok, ""},
		{"string and array content", body(user("a"), assistant([]any{text("b")}), user([]any{text("c")})), ""},
		{"not json", "{nope", "not valid JSON"},
		{"missing model", with(ok, "model", nil), "model: Field required"},
		{"missing max_tokens", with(ok, "max_tokens", nil), "max_tokens: Field required"},
		{"zero max_tokens", with(ok, "max_tokens", 0), "max_tokens: Input should be greater than or equal to 1"},
		{"missing messages", with(ok, "messages", nil), "messages: Field required"},
		{"no messages", with(ok, "messages", []any{}), "at least one message"},
		{"bad role", body(map[string]any{"role": "system", "content": "x"}), "Input should be 'user' or 'assistant'"},
		{"assistant first", body(assistant("x"), user("y")), `first message must use the "user" role`},
		{"consecutive users", body(user("a"), user("b")), `multiple "user" roles in a row`},
		{"empty content", body(user([]any{})), "must have non-empty content"},
		{"empty text", body(user([]any{text("")})), "text content blocks must be non-empty"},
		{"prefill may be empty", body(user("a"), assistant([]any{})), ""},
		{"tool_use in user", body(user([]any{toolUse("t1", "Bash")})), "tool_use blocks can only be in assistant messages"},
		{"orphan tool_result", body(user([]any{toolResult("t9", "x")})), "unexpected `tool_use_id` found in `tool_result` blocks: t9"},
		{"tool_result answers wrong id", body(user("a"), assistant([]any{toolUse("t1", "Bash")}), user([]any{toolResult("t2", "x")})), "without `tool_result` blocks immediately after: t1"},
		{"unanswered tool_use", body(user("a"), assistant([]any{toolUse("t1", "Bash"), toolUse("t2", "Read")}), user([]any{toolResult("t1", "x")})),
			"`tool_use` ids were found without `tool_result` blocks immediately after: t2"},
		{"answered tool_use", body(user("a"), assistant([]any{toolUse("t1", "Bash")}), user([]any{toolResult("t1", "x"), text("go on")})), ""},
		{"pending tool_use at the end", body(user("a"), assistant([]any{toolUse("t1", "Bash")})), ""},
		{"duplicate tool_use id", body(user("a"), assistant([]any{toolUse("t1", "Bash"), toolUse("t1", "Read")})), "must be unique"},
		{"tool_use input not object", body(user("a"), assistant([]any{with(toolUse("t1", "Bash"), "input", "ls")})), "valid dictionary"},
		{"4 breakpoints", marked(4), ""},
		{"5 breakpoints", marked(5), "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"breakpoints count tools and system", with(marked(3),
			"tools", []any{with(schemaTool("a"), "cache_control", cc())},
			"system", []any{with(text("sys"), "cache_control", cc())}), "Found 5."},
		{"nested breakpoint counts", with(body(user("a"), assistant([]any{toolUse("t1", "Bash")}),
			user([]any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": []any{with(text("r"), "cache_control", cc())}}})),
			"system", []any{with(text("s1"), "cache_control", cc()), with(text("s2"), "cache_control", cc()), with(text("s3"), "cache_control", cc()), with(text("s4"), "cache_control", cc())}), "Found 5."},
		{"bad cache_control type", body(user([]any{with(text("a"), "cache_control", map[string]any{"type": "forever"})})), "Input should be 'ephemeral'"},
		{"bad ttl", body(user([]any{with(text("a"), "cache_control", map[string]any{"type": "ephemeral", "ttl": "2h"})})), "'5m' or '1h'"},
		{"thinking ok", with(ok, "thinking", map[string]any{"type": "enabled", "budget_tokens": 2048}), ""},
		{"thinking budget too small", with(ok, "thinking", map[string]any{"type": "enabled", "budget_tokens": 1000}), "greater than or equal to 1024"},
		{"thinking budget not below max_tokens", with(ok, "thinking", map[string]any{"type": "enabled", "budget_tokens": 4096}), "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking adaptive", with(ok, "thinking", map[string]any{"type": "adaptive"}), ""},
		{"duplicate tool names", with(ok, "tools", []any{schemaTool("Bash"), schemaTool("Bash")}), "Tool names must be unique"},
		{"bad tool name", with(ok, "tools", []any{schemaTool("has space")}), "String should match pattern"},
		{"tool without schema", with(ok, "tools", []any{with(schemaTool("a"), "input_schema", nil)}), "input_schema: Field required"},
		{"server tool without schema", with(ok, "tools", []any{map[string]any{"type": "web_search_20250305", "name": "web_search"}}), ""},
		{"server tool results", body(user("a"), assistant([]any{
			map[string]any{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": map[string]any{"query": "x"}},
			map[string]any{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []any{map[string]any{"type": "web_search_result", "url": "u", "title": "t"}}},
			map[string]any{"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2", "content": map[string]any{"type": "code_execution_result", "stdout": ""}},
		}), user("b")), ""},
		{"top-level cache_control counts", with(marked(4), "cache_control", cc()), "Found 5."},
		{"system string", with(ok, "system", "be brief"), ""},
		{"system non-text block", with(ok, "system", []any{map[string]any{"type": "image"}}), "system.0.type"},
		{"wrong field type", with(ok, "max_tokens", "many"), "request body"},
	}
	srv := start(t, Config{})
	c := httpClient(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, srv.URL, "/v1/messages", tt.body)
			if tt.want == "" {
				if res.Status != 200 {
					t.Fatalf("status %d: %s", res.Status, res.Body)
				}
				return
			}
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(res.Body, &e); err != nil {
				t.Fatalf("error body %s: %v", res.Body, err)
			}
			got := []any{res.Status, e.Type, e.Error.Type, strings.Contains(e.Error.Message, tt.want), e.RequestID == res.Header.Get("request-id")}
			if diff := cmp.Diff([]any{400, "error", "invalid_request_error", true, true}, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nmessage: %s", diff, e.Error.Message)
			}
		})
	}
	// Every request, accepted or rejected, is recorded with its status.
	recs := srv.Requests()
	if len(recs) != len(tests) {
		t.Fatalf("recorded %d requests, sent %d", len(recs), len(tests))
	}
	for i, r := range recs {
		wantStatus := 400
		if tests[i].want == "" {
			wantStatus = 200
		}
		if r.Status != wantStatus || r.Index != i+1 || len(r.Body) == 0 {
			t.Errorf("record %d (%s): status %d index %d body %d bytes", i, tests[i].name, r.Status, r.Index, len(r.Body))
		}
		if wantStatus == 400 && r.Error == "" {
			t.Errorf("record %d (%s): rejection without a message", i, tests[i].name)
		}
	}
}

func TestHeaderRules(t *testing.T) {
	srv := start(t, Config{APIKey: "sekret"})
	c := httpClient(t)
	// call sends x-api-key "test": wrong key.
	res := call(t, c, srv.URL, "/v1/messages", body(user("hi")))
	if res.Status != 401 || !strings.Contains(string(res.Body), "authentication_error") {
		t.Errorf("wrong key: %d %s", res.Status, res.Body)
	}
	open := start(t, Config{})
	req := body(user("hi"))
	raw, _ := json.Marshal(req)
	r, _ := newRequest(t, open.URL+"/v1/messages", raw)
	r.Header.Del("anthropic-version")
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("missing anthropic-version: status %d", resp.StatusCode)
	}
}

// FuzzValidToolName holds validToolName to the API's pattern.
func FuzzValidToolName(f *testing.F) {
	for _, s := range []string{"", "a", "Bash", "mcp__srv__tool-1", "has space", "ü", "a.b", strings.Repeat("x", 128), strings.Repeat("x", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validToolName(name), toolNamePattern.MatchString(name); got != want {
			t.Fatalf("validToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	})
}
