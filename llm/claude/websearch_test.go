package claude

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestFakeWebSearch sends the server-side web search tool through the real
// SDK client to the fake and reads back the streamed server_tool_use (its
// query split across input_json_delta fragments), the
// web_search_tool_result with its hits, a failed search and the text; then
// continues the conversation with those blocks, as after a pause_turn,
// and the fake accepts them.
func TestFakeWebSearch(t *testing.T) {
	var tools []string
	srv := newFake(t, 3, func(r *fakeapi.Request) fakeapi.Reply {
		for _, tl := range r.Tools {
			tools = append(tools, tl.Type+"/"+tl.Name)
		}
		if r.Turn() > 0 {
			return fakeapi.TextReply("continued")
		}
		content := fakeapi.WebSearchBlocks("go 1.26 release notes",
			fakeapi.SearchHit{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26", PageAge: "2 days ago"},
			fakeapi.SearchHit{Title: "Go blog", URL: "https://go.dev/blog"})
		content = append(content, fakeapi.WebSearchErrorBlocks("more", "max_uses_exceeded")...)
		content = append(content, fakeapi.TextBlock("Go 1.26 is out."))
		return fakeapi.Reply{Content: content, StopReason: "pause_turn"}
	})
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	req := &llm.Request{Model: "claude-test", MaxTokens: 1000, Messages: []llm.Message{llm.UserText("search for go 1.26")},
		Tools: []llm.ToolDef{{WebSearch: &llm.WebSearchTool{MaxUses: 2, AllowedDomains: []string{"go.dev"}}}}}
	evs, err := run(t, m, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := doneResponse(t, evs)
	if resp.StopReason != llm.StopPauseTurn {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	ids := []string{resp.Content[0].ID, resp.Content[2].ID}
	want := []llm.Block{
		{Type: llm.BlockServerToolUse, ID: ids[0], Name: "web_search", Input: json.RawMessage(`{"query":"go 1.26 release notes"}`)},
		{Type: llm.BlockWebSearchResult, ToolUseID: ids[0], Content: []llm.Block{
			{Type: llm.BlockWebSearchHit, Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26", PageAge: "2 days ago"},
			{Type: llm.BlockWebSearchHit, Title: "Go blog", URL: "https://go.dev/blog"}}},
		{Type: llm.BlockServerToolUse, ID: ids[1], Name: "web_search", Input: json.RawMessage(`{"query":"more"}`)},
		{Type: llm.BlockWebSearchResult, ToolUseID: ids[1], ErrorCode: "max_uses_exceeded"},
		llm.Text("Go 1.26 is out."),
	}
	if diff := cmp.Diff(want, resp.Content, cmpopts.IgnoreFields(llm.Block{}, "Data")); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(ids[0], "srvtoolu_") || resp.Content[1].Content[0].Data == "" {
		t.Errorf("ids %v, encrypted content %q", ids, resp.Content[1].Content[0].Data)
	}
	if len(tools) != 1 || tools[0] != "web_search_20250305/web_search" {
		t.Errorf("tools the fake saw: %v", tools)
	}
	if body := string(srv.Requests()[0].Body); !strings.Contains(body, `"tools":[{"max_uses":2,"allowed_domains":["go.dev"],"name":"web_search","type":"web_search_20250305"}]`) {
		t.Errorf("request body: %s", body)
	}

	req.Messages = append(req.Messages, resp.Message())
	evs, err = run(t, m, req)
	if err != nil {
		t.Fatalf("continuing with the search blocks: %v", err)
	}
	if got := doneResponse(t, evs); llm.JoinText(got.Content) != "continued" {
		t.Errorf("second reply %+v", got)
	}
	body := string(srv.Requests()[1].Body)
	for _, part := range []string{`"type":"server_tool_use"`, `"encrypted_content":"` + resp.Content[1].Content[0].Data + `"`,
		`{"error_code":"max_uses_exceeded","type":"web_search_tool_result_error"}`} {
		if !strings.Contains(body, part) {
			t.Errorf("continued request lacks %s:\n%s", part, body)
		}
	}
}
