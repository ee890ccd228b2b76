package fakeapi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScriptWebSearch: a script's "web_search" block becomes the two
// blocks of a server-side search, with the query's placeholders filled.
func TestScriptWebSearch(t *testing.T) {
	sc, err := ParseScript("s.yaml", []byte(`- reply:
    - web_search:
        query: "{{first_user}} docs"
        results:
          - {title: Docs, url: "https://example.com/docs", page_age: "1 day ago"}
    - web_search: {query: again, error: too_many_requests}
    - text: Found the docs.
`))
	if err != nil {
		t.Fatal(err)
	}
	r := sc.Policy()(&Request{Messages: []Message{{Role: "user", Content: []Block{TextBlock("cohort")}}}})
	var kinds []string
	for _, b := range r.Content {
		kinds = append(kinds, b.Type)
	}
	if diff := cmp.Diff([]string{"server_tool_use", "web_search_tool_result", "server_tool_use", "web_search_tool_result", "text"}, kinds); diff != "" {
		t.Fatalf("blocks (-want +got):\n%s", diff)
	}
	if got := string(r.Content[0].Input); got != `{"query":"cohort docs"}` {
		t.Errorf("query input %s", got)
	}
	if h := r.Content[1].Content[0]; h.Title != "Docs" || h.URL != "https://example.com/docs" || h.PageAge != "1 day ago" {
		t.Errorf("hit %+v", h)
	}
	if r.Content[3].ErrorCode != "too_many_requests" {
		t.Errorf("error block %+v", r.Content[3])
	}
	for _, bad := range []struct{ script, says string }{
		{"- reply:\n    - web_search: {query: q, results: [{title: t}]}\n", "needs a url"},
		{"- reply:\n    - web_search: {query: q, results: [{url: u}], error: unavailable}\n", "both results and an error"},
		{"- reply:\n    - web_search: {query: q, limit: 3}\n", `unknown key "limit"`},
	} {
		if _, err := ParseScript("bad.yaml", []byte(bad.script)); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%q: error %v, want %q", bad.script, err, bad.says)
		}
	}
}
