package claude

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// captureTransport records the body of each request and answers with an
// empty event stream. It starts no goroutines.
type captureTransport struct {
	mu   sync.Mutex
	body []byte
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.body = b
	c.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

// sdkBody returns the body the SDK sends for req when it is given the
// parameters sdkParams builds: the bytes encodeRequest must reproduce.
func sdkBody(t testing.TB, req *llm.Request) ([]byte, error) {
	t.Helper()
	params, opts, err := sdkParams(req)
	if err != nil {
		return nil, err
	}
	tr := &captureTransport{}
	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("k"),
		option.WithBaseURL("http://oracle.invalid"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}))
	stream := client.Messages.NewStreaming(t.Context(), params, opts...)
	for stream.Next() {
	}
	stream.Close()
	if err := stream.Err(); err != nil {
		t.Fatalf("the SDK did not send the request: %v", err)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.body, nil
}

// checkMatchesSDK fails unless encodeRequest and the SDK agree on req: the
// same bytes, or both an error.
func checkMatchesSDK(t *testing.T, req *llm.Request) {
	t.Helper()
	want, wantErr := sdkBody(t, req)
	// Twice with one cache: the second time the stable parts come from it.
	cache := &jsonenc.Cache{}
	got, err := encodeRequest(req, cache, 0)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("encodeRequest error %v, SDK translation error %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("body differs from the SDK's (-sdk +ours):\n%s", diff)
	}
	again, err := encodeRequest(req, cache, len(got))
	if err != nil || string(again) != string(got) {
		t.Fatalf("the second encoding, from the cache, differs (%v):\n%s\n%s", err, got, again)
	}
	if !json.Valid(got) {
		t.Fatalf("body is not JSON: %s", got)
	}
}

// awkward holds every character class the string escaping treats apart.
const awkward = "plain \"quoted\" back\\slash <b>&amp; \u2028\u2029 tab\t nl\n cr\r bs\b ff\f nul\x00 esc\x1b del\x7f é 世界 🙂 bad\xff\xfe utf8 \xe2\x80 cut"

func TestEncodeMatchesSDK(t *testing.T) {
	marked := func(b llm.Block) llm.Block { b.Cache = true; return b }
	user := func(bs ...llm.Block) llm.Message { return llm.Message{Role: llm.RoleUser, Content: bs} }
	img := llm.Block{Type: llm.BlockImage, MediaType: "image/png", Data: "iVBORw0KGgo="}
	temp := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		req  *llm.Request
	}{
		{"golden", goldenRequest()},
		{"model only", &llm.Request{Model: "claude-x"}},
		{"long stable texts", &llm.Request{Model: "m", System: []llm.Block{llm.Text(strings.Repeat(awkward, 10)), llm.Text("short")},
			Tools: []llm.ToolDef{{Name: "T", Description: strings.Repeat("<desc> ", 100)}, {Name: "U", Description: strings.Repeat("<desc> ", 100)}}}},
		{"awkward strings everywhere", &llm.Request{Model: awkward, MaxTokens: 5, StopSeqs: []string{awkward, ""},
			System: []llm.Block{llm.Text(awkward)},
			Tools:  []llm.ToolDef{{Name: awkward, Description: awkward, InputSchema: json.RawMessage(`{"description":"<a> & \u2028 b"}`)}},
			Messages: []llm.Message{user(llm.Text(awkward), llm.ToolResult(awkward, awkward, true)),
				{Role: llm.RoleAssistant, Content: []llm.Block{
					{Type: llm.BlockThinking, Thinking: awkward, Signature: awkward},
					{Type: llm.BlockRedactedThinking, Data: awkward},
					llm.ToolUse(awkward, awkward, json.RawMessage(" {\n \"x\" : \"<\u2029>\" , \"y\":[1, 2.5e3, null, true] } ")),
				}}}}},
		{"markers on every kind", &llm.Request{Model: "m",
			Tools: []llm.ToolDef{{Name: "T", InputSchema: json.RawMessage(`{}`), Cache: true}},
			Messages: []llm.Message{user(marked(img), llm.Block{Type: llm.BlockToolResult, ToolUseID: "t", Cache: true, Content: []llm.Block{
				marked(llm.Text("")), img}}),
				{Role: llm.RoleAssistant, Content: []llm.Block{marked(llm.ToolUse("u", "T", nil))}}}}},
		{"empty results", &llm.Request{Model: "m", Messages: []llm.Message{user(
			llm.Block{Type: llm.BlockToolResult, ToolUseID: "a"},
			llm.Block{Type: llm.BlockToolResult, ToolUseID: "b", Content: []llm.Block{}},
			llm.ToolResult("c", "", false), llm.Text(""))}}},
		{"deferred tools and references", &llm.Request{Model: "m",
			Tools: []llm.ToolDef{{Name: "ToolSearch", Description: "d", InputSchema: json.RawMessage(`{}`), Cache: true},
				{Name: "NotebookEdit", Description: "<nb>", InputSchema: json.RawMessage(`{"type":"object"}`), Defer: true}},
			Messages: []llm.Message{user(llm.Block{Type: llm.BlockToolResult, ToolUseID: "t", Content: []llm.Block{
				llm.ToolReference("NotebookEdit"), marked(llm.ToolReference(awkward))}})}}},
		{"deferred tool with a marker", &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "T", Defer: true, Cache: true}}}},
		{"reference without a name", &llm.Request{Model: "m", Messages: []llm.Message{user(llm.Block{Type: llm.BlockToolResult,
			ToolUseID: "t", Content: []llm.Block{{Type: llm.BlockToolReference}}})}}},
		{"thinking without signature", &llm.Request{Model: "m", Messages: []llm.Message{
			{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockThinking}}}}}},
		{"adaptive thinking", &llm.Request{Model: "m", Thinking: &llm.Thinking{Adaptive: true}}},
		{"budget wins over adaptive", &llm.Request{Model: "m", Thinking: &llm.Thinking{BudgetTokens: 2000, Adaptive: true}}},
		{"schemas", &llm.Request{Model: "m", Tools: []llm.ToolDef{
			{Name: "none"}, {Name: "blank", InputSchema: json.RawMessage(" \n ")},
			{Name: "spaced", Description: "d", InputSchema: json.RawMessage("{ \"type\" : \"object\" ,\n\t\"properties\": {} }")}}}},
		{"temperature 0", &llm.Request{Model: "m", Temperature: temp(0)}},
		{"temperature 1", &llm.Request{Model: "m", Temperature: temp(1)}},
		{"temperature tiny", &llm.Request{Model: "m", Temperature: temp(1e-7)}},
		{"temperature third", &llm.Request{Model: "m", Temperature: temp(1.0 / 3)}},
		{"effort", &llm.Request{Model: "m", Effort: "xhigh", MaxTokens: 1}},
		{"invalid", &llm.Request{Model: "m", Messages: []llm.Message{user(llm.Block{Type: "video"})}}},
		{"web search tool", &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "web_search",
			WebSearch: &llm.WebSearchTool{MaxUses: 5, AllowedDomains: []string{"go.dev", "<a>.org"}}, Cache: true}}}},
		{"web search tool, blocked domains", &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "web_search",
			WebSearch: &llm.WebSearchTool{BlockedDomains: []string{"spam.example"}}}}}},
		{"web search tool, defaults", &llm.Request{Model: "m", Tools: []llm.ToolDef{{WebSearch: &llm.WebSearchTool{}}}}},
		{"web search tool, both lists", &llm.Request{Model: "m", Tools: []llm.ToolDef{{WebSearch: &llm.WebSearchTool{
			AllowedDomains: []string{"a"}, BlockedDomains: []string{"b"}}}}}},
		{"web search blocks", &llm.Request{Model: "m", Messages: []llm.Message{user(llm.Text("search")),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				{Type: llm.BlockServerToolUse, ID: "srvtoolu_1", Name: "web_search", Input: json.RawMessage(`{"query": "go <1.26>"}`)},
				{Type: llm.BlockWebSearchResult, ToolUseID: "srvtoolu_1", Content: []llm.Block{
					{Type: llm.BlockWebSearchHit, Title: "Go 1.26 & more", URL: "https://go.dev/doc/go1.26", Data: "enc1", PageAge: "2 days ago"},
					{Type: llm.BlockWebSearchHit, Title: "t", URL: "https://e.org", Data: "enc2"}}},
				{Type: llm.BlockServerToolUse, ID: "srvtoolu_2", Name: "web_search", Input: json.RawMessage(`{"query": "again"}`)},
				marked(llm.Block{Type: llm.BlockWebSearchResult, ToolUseID: "srvtoolu_2", ErrorCode: "max_uses_exceeded"}),
				{Type: llm.BlockWebSearchResult, ToolUseID: "srvtoolu_3", Content: []llm.Block{}},
				llm.Text("Found it."),
			}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkMatchesSDK(t, tt.req) })
	}
}

// FuzzEncodeMatchesSDK puts arbitrary strings and JSON where a request
// carries them: whatever they are, our body is the SDK's, or both refuse.
func FuzzEncodeMatchesSDK(f *testing.F) {
	f.Add("hello", `{"a":1}`, `{"type":"object"}`, "Read", false)
	f.Add(awkward, " {\"x\" : \"<>&\u2028\" } ", "{}", "<T>", true)
	f.Add("\xff", `[1]`, `{"a":`, "", false)
	f.Add("", "", "", "n", true)
	f.Fuzz(func(t *testing.T, text, input, schema, name string, cache bool) {
		req := &llm.Request{Model: name + "-model",
			System: []llm.Block{{Type: llm.BlockText, Text: text, Cache: cache}},
			Tools:  []llm.ToolDef{{Name: name, Description: text, InputSchema: json.RawMessage(schema), Cache: cache}},
			Messages: []llm.Message{
				llm.UserText(text),
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(text), llm.ToolUse(name, name, json.RawMessage(input))}},
				{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: name + "x", IsError: cache,
					Content: []llm.Block{llm.Text(text)}}}},
			}}
		checkMatchesSDK(t, req)
	})
}

// FuzzAppendString checks the string escaping against encoding/json's.
