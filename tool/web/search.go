package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// SearchConfig configures WebSearch. Model is required; zero values of the
// others take the defaults.
type SearchConfig struct {
	// Model runs the searches. It must support llm.ToolDef.WebSearch, the
	// provider's server-side web search (llm/claude does).
	Model llm.Model
	// ModelName is the model the search requests name.
	ModelName string
	// MaxUses bounds the searches the model may run for one call (8).
	MaxUses int
	// MaxTokens bounds the search response (4096).
	MaxTokens int
	// MaxContinuations bounds how often a paused search turn is resumed (3).
	MaxContinuations int
	// Now is the clock for durationSeconds (time.Now).
	Now func() time.Time
}

// NewSearch returns the WebSearch tool for cfg. A call is one request to
// the model with the server-side web search tool attached and the query as
// its prompt; the provider searches, and the hits and the model's summary
// come back. Searching changes nothing, so calls are read-only and may run
// in parallel (the permission gate still asks: the query leaves the
// machine). Safe for concurrent use.
func NewSearch(cfg SearchConfig) tool.Tool {
	if cfg.MaxUses <= 0 {
		cfg.MaxUses = 8
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	if cfg.MaxContinuations <= 0 {
		cfg.MaxContinuations = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	w := &searcher{cfg: cfg}
	return tool.New(tool.Spec[searchInput]{Name: "WebSearch", Description: searchDescription, Input: searchSchema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: w.run})
}

// searcher is WebSearch's state: its settings.
type searcher struct{ cfg SearchConfig }

const searchDescription = `Searches the web and returns the results: page titles and links, with a summary of what they say. Use it for information newer than your training, or facts you need to check.

- query is what to search for; be specific (product names, versions, error messages).
- allowed_domains limits the results to those sites; blocked_domains leaves sites out. Give one of them, not both.
- Results reflect today's web: when you ask about recent events, put the year in the query.
- When you use what you found, cite the pages as markdown links in your answer.`

var searchSchema = tool.Object(
	tool.Required("query", tool.String("What to search for.").WithMinLength(2)),
	tool.Optional("allowed_domains", tool.Array("Only return results from these domains.", tool.String("A domain, e.g. go.dev."))),
	tool.Optional("blocked_domains", tool.Array("Never return results from these domains.", tool.String("A domain, e.g. example.com."))),
)

// searchSystem is the prompt of the search request.
const searchSystem = "You run web searches for a coding agent. Search for what the user asks, then summarise in a few sentences what the results say that answers it. Keep to what the pages say."

// SearchResponse is the structured result of a WebSearch call
// (tool.Result.Response), in Claude Code's shape: Results holds, in order,
// a SearchHits for each search the provider ran and a string for each
// piece of the model's commentary (or a failed search's error).
type SearchResponse struct {
	Query           string  `json:"query"`
	Results         []any   `json:"results"`
	DurationSeconds float64 `json:"durationSeconds"`
}

// SearchHits are the hits of one search.
type SearchHits struct {
	ToolUseID string `json:"tool_use_id"`
	Content   []Link `json:"content"`
}

// Link is one hit.
type Link struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

type searchInput struct {
	Query          string   `json:"query"`
	AllowedDomains []string `json:"allowed_domains"`
	BlockedDomains []string `json:"blocked_domains"`
}

func (w *searcher) run(ctx context.Context, _ *tool.Env, in searchInput) (tool.Result, error) {
	if len(in.AllowedDomains) > 0 && len(in.BlockedDomains) > 0 {
		return tool.Errorf("give allowed_domains or blocked_domains, not both"), nil
	}
	start := w.cfg.Now()
	req := &llm.Request{
		Model:     w.cfg.ModelName,
		System:    []llm.Block{llm.Text(searchSystem)},
		MaxTokens: w.cfg.MaxTokens,
		Tools: []llm.ToolDef{{Name: "web_search", WebSearch: &llm.WebSearchTool{MaxUses: w.cfg.MaxUses,
			AllowedDomains: in.AllowedDomains, BlockedDomains: in.BlockedDomains}}},
		Messages: []llm.Message{llm.UserText("Search the web for: " + in.Query)},
	}
	var content []llm.Block
	for turn := 0; ; turn++ {
		resp, err := w.send(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Errorf("The web search failed: %v", err), nil
		}
		content = append(content, resp.Content...)
		if resp.StopReason != llm.StopPauseTurn || turn == w.cfg.MaxContinuations {
			break
		}
		// A long search turn pauses; sending it back lets it go on.
		req.Messages = append(req.Messages, resp.Message())
	}
	resp := &SearchResponse{Query: in.Query, Results: results(content),
		DurationSeconds: w.cfg.Now().Sub(start).Seconds()}
	res := tool.Text(render(in.Query, resp.Results))
	res.Response = resp
	return res, nil
}

// send runs one request and returns its response.
func (w *searcher) send(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	for ev, err := range w.cfg.Model.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Type == llm.EventDone {
			return ev.Response, nil
		}
	}
	return nil, fmt.Errorf("the model's stream ended without a response")
}

// results turns the response blocks into the shape of SearchResponse.
func results(content []llm.Block) []any {
	out := []any{}
	for _, b := range content {
		switch b.Type {
		case llm.BlockWebSearchResult:
			if b.ErrorCode != "" {
				out = append(out, "Web search error: "+b.ErrorCode)
				continue
			}
			hits := SearchHits{ToolUseID: b.ToolUseID, Content: []Link{}}
			for _, h := range b.Content {
				hits.Content = append(hits.Content, Link{Title: h.Title, URL: h.URL})
			}
			out = append(out, hits)
		case llm.BlockText:
			if t := strings.TrimSpace(b.Text); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// render is the text the calling model reads.
func render(query string, results []any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Web search results for %q:\n", query)
	found := false
	for _, r := range results {
		switch r := r.(type) {
		case SearchHits:
			links, _ := json.Marshal(r.Content)
			fmt.Fprintf(&b, "\nLinks: %s\n", links)
			found = found || len(r.Content) > 0
		case string:
			fmt.Fprintf(&b, "\n%s\n", r)
		}
	}
	if !found {
		b.WriteString("\nNo pages were found.\n")
		return strings.TrimSuffix(b.String(), "\n")
	}
	b.WriteString("\nWhen you use these results, cite the pages you rely on as markdown links ([title](url)).")
	return b.String()
}
