package fakeapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeferredToolsBilledWhenLoaded: a tool with defer_loading is not in
// the prompt — the request costs what it costs without it, and the cached
// prefix is the same — until a tool_reference loads it; its definition is
// then billed where the reference sits, after the prefix that was cached.
func TestDeferredToolsBilledWhenLoaded(t *testing.T) {
	srv := start(t, Config{Now: newClock().Now})
	c := httpClient(t)
	notebook := map[string]any{"name": "NotebookEdit", "description": "Edits a notebook. " + strings.Repeat("Cells by id. ", 400),
		"input_schema": map[string]any{"type": "object"}, "defer_loading": true}
	plain := cachedBody(longSystem, longTools, markedUser(longUser))
	deferred := cachedBody(longSystem, longTools, markedUser(longUser))
	deferred["tools"] = append(deferred["tools"].([]any), notebook)
	if a, b := countTokens(t, c, srv, plain), countTokens(t, c, srv, deferred); a != b {
		t.Errorf("a deferred tool counts: %d tokens with it, %d without", b, a)
	}
	first := usageOf(t, call(t, c, srv.URL, "/v1/messages", deferred))

	use := assistant([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{"query": "notebook"}}})
	loaded := cachedBody(longSystem, longTools, user(longUser), use, user([]any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1",
		"content": []any{map[string]any{"type": "tool_reference", "tool_name": "NotebookEdit"}}, "cache_control": cc()}}))
	loaded["tools"] = deferred["tools"]
	withoutRef := cachedBody(longSystem, longTools, user(longUser), use, user([]any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1",
		"content": "none", "cache_control": cc()}}))
	withoutRef["tools"] = deferred["tools"]
	grown, bare := countTokens(t, c, srv, loaded), countTokens(t, c, srv, withoutRef)
	if def := len(canonical(mustJSON(t, notebook), nil)) / 4; grown-bare < def-10 {
		t.Errorf("the loaded definition adds %d tokens; it is about %d", grown-bare, def)
	}
	next := usageOf(t, call(t, c, srv.URL, "/v1/messages", loaded))
	if diff := cmp.Diff(Usage{CacheReadInputTokens: first.CacheCreationInputTokens, CacheCreationInputTokens: grown - first.CacheCreationInputTokens}, next); diff != "" {
		t.Errorf("the request that loads the tool does not read the prefix written without it (-want +got):\n%s", diff)
	}
}

func TestDeferredToolsRules(t *testing.T) {
	srv := start(t, Config{})
	c := httpClient(t)
	tool := func(name string, deferred bool, marked bool) map[string]any {
		t := map[string]any{"name": name, "input_schema": map[string]any{"type": "object"}}
		if deferred {
			t["defer_loading"] = true
		}
		if marked {
			t["cache_control"] = cc()
		}
		return t
	}
	ref := func(name string) []map[string]any {
		return []map[string]any{
			assistant([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{}}}),
			user([]any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1",
				"content": []any{map[string]any{"type": "tool_reference", "tool_name": name}}}}),
		}
	}
	tests := []struct {
		name  string
		tools []any
		msgs  []map[string]any
		want  string
	}{
		{"every tool deferred", []any{tool("A", true, false)}, nil, "at least one must be loaded"},
		{"a marker on a deferred tool", []any{tool("A", false, false), tool("B", true, true)}, nil, "cannot set cache_control"},
		{"a reference to no tool", []any{tool("ToolSearch", false, false)}, ref("Nope"), "names no tool in tools"},
		{"a reference to a loaded tool", []any{tool("ToolSearch", false, false)}, ref("ToolSearch"), "without defer_loading"},
		{"a reference without a name", []any{tool("ToolSearch", false, false), tool("B", true, false)}, ref(""), "tool_name: Field required"},
		{"fine", []any{tool("ToolSearch", false, false), tool("B", true, false)}, ref("B"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := body(append([]map[string]any{user("hi")}, tt.msgs...)...)
			b["tools"] = tt.tools
			res := call(t, c, srv.URL, "/v1/messages", b)
			switch {
			case tt.want == "" && res.Status != 200:
				t.Errorf("status %d: %s", res.Status, res.Body)
			case tt.want != "" && (res.Status != 400 || !strings.Contains(string(res.Body), tt.want)):
				t.Errorf("status %d %s, want 400 saying %q", res.Status, res.Body, tt.want)
			}
		})
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
