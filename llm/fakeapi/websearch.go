package fakeapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The server-side web search, as the API streams it: a server_tool_use
// block with the query (input streamed as input_json_delta, like a
// tool_use), then a web_search_tool_result block that arrives whole in its
// content_block_start, holding web_search_result hits or an error object.
// The fake never searches: the hits are the reply's.

// SearchHit is one result of a scripted web search.
type SearchHit struct {
	Title, URL string
	// PageAge is optional ("3 days ago").
	PageAge string
}

// WebSearchBlocks returns the two blocks of one server-side search for
// query with hits: a server_tool_use (id generated) and its
// web_search_tool_result.
func WebSearchBlocks(query string, hits ...SearchHit) []Block {
	input, _ := marshalNoEscape(map[string]string{"query": query})
	res := Block{Type: "web_search_tool_result", Content: []Block{}}
	for _, h := range hits {
		res.Content = append(res.Content, Block{Type: "web_search_result", Title: h.Title, URL: h.URL, PageAge: h.PageAge})
	}
	return []Block{{Type: "server_tool_use", Name: "web_search", Input: input}, res}
}

// WebSearchErrorBlocks returns a search for query that failed with code
// ("max_uses_exceeded", "too_many_requests", "unavailable", …).
func WebSearchErrorBlocks(query, code string) []Block {
	bs := WebSearchBlocks(query)
	bs[1].Content, bs[1].ErrorCode = nil, code
	return bs
}

// normalizeSearch fills the defaults of a server_tool_use (a derived
// "srvtoolu_" id, the name web_search, compacted input) and a
// web_search_tool_result (the id of the server_tool_use before it; each
// hit's encrypted content, derived from its URL). lastUse carries the id
// from one to the other.
func normalizeSearch(b Block, seed [32]byte, i int, lastUse *string) (Block, error) {
	if b.Type == "server_tool_use" {
		if b.Name == "" {
			b.Name = "web_search"
		}
		in := b.Input
		if len(bytes.TrimSpace(in)) == 0 {
			in = json.RawMessage("{}")
		}
		var buf bytes.Buffer
		if !isJSONObject(in) || json.Compact(&buf, in) != nil {
			return b, fmt.Errorf("server_tool_use input is not a JSON object: %.100s", in)
		}
		b.Input = buf.Bytes()
		if b.ID == "" {
			b.ID = "srvtoolu_" + derivedID(seed, i)
		}
		*lastUse = b.ID
		return b, nil
	}
	if b.ToolUseID == "" {
		if *lastUse == "" {
			return b, fmt.Errorf("web_search_tool_result without a tool_use_id, and no server_tool_use before it")
		}
		b.ToolUseID = *lastUse
	}
	hits := make([]Block, len(b.Content))
	for k, h := range b.Content {
		if h.Type == "" {
			h.Type = "web_search_result"
		}
		if h.Type != "web_search_result" || h.URL == "" {
			return b, fmt.Errorf("web_search_tool_result content %d: want a web_search_result with a url", k)
		}
		if h.EncryptedContent == "" {
			sum := sha256.Sum256([]byte(h.URL))
			h.EncryptedContent = base64.StdEncoding.EncodeToString(sum[:12])
		}
		hits[k] = h
	}
	b.Content = hits
	return b, nil
}

type (
	wireSearchResult struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   any    `json:"content"`
	}
	wireSearchHit struct {
		Type             string `json:"type"`
		Title            string `json:"title"`
		URL              string `json:"url"`
		EncryptedContent string `json:"encrypted_content"`
		PageAge          string `json:"page_age,omitempty"`
	}
	wireSearchError struct {
		Type      string `json:"type"`
		ErrorCode string `json:"error_code"`
	}
)

// searchResultWire is a web_search_tool_result as the API sends it.
func searchResultWire(b Block) wireSearchResult {
	if b.ErrorCode != "" {
		return wireSearchResult{"web_search_tool_result", b.ToolUseID, wireSearchError{"web_search_tool_result_error", b.ErrorCode}}
	}
	hits := make([]wireSearchHit, len(b.Content))
	for i, h := range b.Content {
		hits[i] = wireSearchHit{"web_search_result", h.Title, h.URL, h.EncryptedContent, h.PageAge}
	}
	return wireSearchResult{"web_search_tool_result", b.ToolUseID, hits}
}

// webSearch parses a script's "- web_search: {query: …, results: [{title,
// url, page_age}], error: code}" into the two blocks of one search.
func (p *parser) webSearch(n *yaml.Node, what string) ([]Block, error) {
	var query, code string
	var hits []SearchHit
	err := p.fields(n, what+" web_search", func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "query":
			if query, err = p.str(v, what+" web_search query"); err == nil {
				err = p.checkTemplate(query, v.Line)
			}
		case "error":
			code, err = p.str(v, what+" web_search error")
		case "results":
			hits, err = p.searchHits(v, what)
		default:
			err = p.errf(v.Line, "%s web_search: unknown key %q (known: query, results, error)", what, key)
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case code != "" && len(hits) > 0:
		return nil, p.errf(n.Line, "%s web_search has both results and an error; a search either found pages or failed", what)
	case code != "":
		return WebSearchErrorBlocks(query, code), nil
	}
	return WebSearchBlocks(query, hits...), nil
}

func (p *parser) searchHits(n *yaml.Node, what string) ([]SearchHit, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n.Line, "%s web_search results must be a list of {title, url}", what)
	}
	var out []SearchHit
	for _, item := range n.Content {
		var h SearchHit
		err := p.fields(item, what+" web_search result", func(key string, v *yaml.Node) error {
			var err error
			switch key {
			case "title":
				h.Title, err = p.str(v, what+" result title")
			case "url":
				h.URL, err = p.str(v, what+" result url")
			case "page_age":
				h.PageAge, err = p.str(v, what+" result page_age")
			default:
				err = p.errf(v.Line, "%s web_search result: unknown key %q (known: title, url, page_age)", what, key)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if h.URL == "" {
			return nil, p.errf(item.Line, "%s web_search result needs a url", what)
		}
		out = append(out, h)
	}
	return out, nil
}
