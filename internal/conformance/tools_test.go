package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestToolsClaudeCodeAgentsName runs WebSearch, MultiEdit and LS through
// the binary, as a Claude Code agent file that lists them would: WebSearch
// makes its own request to the model with the server-side search tool
// (the fake answers with a search and its hits), MultiEdit edits the
// sequence's file in two places at once, LS lists the project.
func TestToolsClaudeCodeAgentsName(t *testing.T) {
	t.Parallel()
	sc := newScenario(t)
	f := sc.file()
	if err := os.WriteFile(f, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var searchTools []string
	sc.side = func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		for _, tl := range r.Tools {
			searchTools = append(searchTools, tl.Type)
		}
		content := fakeapi.WebSearchBlocks("cohort agents", fakeapi.SearchHit{Title: "Cohort", URL: "https://example.com/cohort"})
		return fakeapi.Reply{Content: append(content, fakeapi.TextBlock("Cohort runs teams of agents."))}
	}
	sc.calls = []call{
		{"WebSearch", map[string]any{"query": "cohort agents"}},
		{"Read", map[string]any{"file_path": f}},
		{"MultiEdit", map[string]any{"file_path": f, "edits": []any{
			map[string]any{"old_string": "alpha", "new_string": "ALPHA"},
			map[string]any{"old_string": "beta", "new_string": "BETA"}}}},
		{"LS", map[string]any{"path": sc.project}},
	}
	got, out := sc.run()
	if got.Steps != "oooo" {
		t.Fatalf("steps %s (WebSearch Read MultiEdit LS), want oooo:\n%s\nresults: %q", got.Steps, out,
			[]string{sc.resultText(0), sc.resultText(2), sc.resultText(3)})
	}
	if text := sc.resultText(0); !strings.Contains(text, "https://example.com/cohort") || !strings.Contains(text, "Cohort runs teams of agents.") {
		t.Errorf("WebSearch result:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(searchTools) != 1 || searchTools[0] != "web_search_20250305" {
		t.Errorf("the search request offered %v, want the server-side web search tool", searchTools)
	}
	if data, _ := os.ReadFile(f); string(data) != "ALPHA\nBETA\n" {
		t.Errorf("after MultiEdit the file holds %q", data)
	}
	if text := sc.resultText(3); !strings.Contains(text, "- "+sc.project+"/") || !strings.Contains(text, "  - "+filepath.Base(f)) {
		t.Errorf("LS result:\n%s", text)
	}
}
