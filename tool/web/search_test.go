package web

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/tool"
)

// TestWebSearch runs the tool on the real Anthropic client against the
// fake API: the request carries the server-side search tool with the
// call's domains; the first turn pauses after one search and is resumed;
// the hits, a failed search and the summary come back as text and as
// Claude Code's structured result.
func TestWebSearch(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := fakeapi.New(fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		bodies = append(bodies, string(r.Raw))
		mu.Unlock()
		if r.Turn() == 0 {
			return fakeapi.Reply{StopReason: "pause_turn", Content: fakeapi.WebSearchBlocks("go 1.26 iterators",
				fakeapi.SearchHit{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"})}
		}
		content := fakeapi.WebSearchErrorBlocks("go 1.26 range funcs", "max_uses_exceeded")
		return fakeapi.Reply{Content: append(content, fakeapi.TextBlock("Go 1.26 keeps range-over-func iterators."))}
	}})
	defer srv.Close()
	model, err := claude.New(claude.Config{APIKey: "k", BaseURL: srv.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ws := NewSearch(SearchConfig{Model: model, ModelName: "claude-test", MaxUses: 3})
	input := json.RawMessage(`{"query": "go 1.26 iterators", "allowed_domains": ["go.dev"]}`)
	if err := tool.ValidateInput(ws.Def().InputSchema, input); err != nil {
		t.Fatal(err)
	}
	res, err := ws.Run(t.Context(), &tool.Env{}, input)
	if err != nil || res.IsError {
		t.Fatalf("Run: %v %q", err, res.TextOf())
	}
	text := res.TextOf()
	for _, want := range []string{`Web search results for "go 1.26 iterators":`, `Links: [{"title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26"}]`,
		"Web search error: max_uses_exceeded", "Go 1.26 keeps range-over-func iterators.", "cite the pages"} {
		if !strings.Contains(text, want) {
			t.Errorf("result text lacks %q:\n%s", want, text)
		}
	}
	resp := res.Response.(*SearchResponse)
	hits := resp.Results[0].(SearchHits)
	if resp.Query != "go 1.26 iterators" || len(resp.Results) != 3 || !strings.HasPrefix(hits.ToolUseID, "srvtoolu_") {
		t.Fatalf("response %+v", resp)
	}
	if diff := cmp.Diff([]any{SearchHits{ToolUseID: hits.ToolUseID, Content: []Link{{"Go 1.26 Release Notes", "https://go.dev/doc/go1.26"}}},
		"Web search error: max_uses_exceeded", "Go 1.26 keeps range-over-func iterators."}, resp.Results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 2 || !strings.Contains(bodies[0], `{"max_uses":3,"allowed_domains":["go.dev"],"name":"web_search","type":"web_search_20250305"}`) ||
		!strings.Contains(bodies[1], `"type":"web_search_tool_result"`) {
		t.Errorf("requests:\n%s", strings.Join(bodies, "\n"))
	}
}

func TestWebSearchRefusesBothDomainLists(t *testing.T) {
	ws := NewSearch(SearchConfig{})
	res, err := ws.Run(t.Context(), &tool.Env{}, json.RawMessage(`{"query": "x y", "allowed_domains": ["a"], "blocked_domains": ["b"]}`))
	if err != nil || !res.IsError || !strings.Contains(res.TextOf(), "not both") {
		t.Fatalf("%v %+v", err, res)
	}
}
