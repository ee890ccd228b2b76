package claude

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// The Messages API's server-side web search: the tool entry that turns it
// on, and the blocks a response carries for it (server_tool_use with the
// query, web_search_tool_result with the hits), which go back unchanged
// when the conversation continues (after a pause_turn). Member order is the
// SDK's, as everywhere in the request body.

// webSearchType is the tool version this package speaks.
const webSearchType = "web_search_20250305"

func appendWebSearchTool(dst []byte, t llm.ToolDef) ([]byte, error) {
	ws := t.WebSearch
	if len(ws.AllowedDomains) > 0 && len(ws.BlockedDomains) > 0 {
		return dst, fmt.Errorf("web search: allowed and blocked domains cannot both be set")
	}
	dst = append(dst, '{')
	comma := false
	member := func(key string) {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, `":`...)
	}
	if ws.MaxUses > 0 {
		member("max_uses")
		dst = strconv.AppendInt(dst, int64(ws.MaxUses), 10)
	}
	for _, list := range []struct {
		key     string
		domains []string
	}{{"allowed_domains", ws.AllowedDomains}, {"blocked_domains", ws.BlockedDomains}} {
		if len(list.domains) == 0 {
			continue
		}
		member(list.key)
		dst = append(dst, '[')
		for i, d := range list.domains {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(dst, d)
		}
		dst = append(dst, ']')
	}
	if t.Cache {
		member("cache_control")
		dst = append(dst, `{"type":"ephemeral"}`...)
	}
	member("name")
	dst = append(dst, `"web_search","type":"`+webSearchType+`"}`...)
	return dst, nil
}

func appendWebSearchResult(dst []byte, b llm.Block) []byte {
	dst = append(dst, `{"content":`...)
	if b.ErrorCode != "" {
		dst = append(dst, `{"error_code":`...)
		dst = jsonenc.AppendString(dst, b.ErrorCode)
		dst = append(dst, `,"type":"web_search_tool_result_error"}`...)
	} else {
		dst = append(dst, '[')
		for i, h := range b.Content {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"encrypted_content":`...)
			dst = jsonenc.AppendString(dst, h.Data)
			dst = append(dst, `,"title":`...)
			dst = jsonenc.AppendString(dst, h.Title)
			dst = append(dst, `,"url":`...)
			dst = jsonenc.AppendString(dst, h.URL)
			if h.PageAge != "" {
				dst = append(dst, `,"page_age":`...)
				dst = jsonenc.AppendString(dst, h.PageAge)
			}
			dst = append(dst, `,"type":"web_search_result"}`...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"tool_use_id":`...)
	dst = jsonenc.AppendString(dst, b.ToolUseID)
	dst = appendCache(dst, b.Cache)
	return append(dst, `,"type":"web_search_tool_result"}`...)
}

// wireSearchResult is the content of a web_search_tool_result block in a
// response: an array of hits, or an error object.
type wireSearchHit struct {
	Type             string `json:"type"`
	Title            string `json:"title"`
	URL              string `json:"url"`
	EncryptedContent string `json:"encrypted_content"`
	PageAge          string `json:"page_age"`
}

type wireSearchError struct {
	Type      string `json:"type"`
	ErrorCode string `json:"error_code"`
}

// searchResultBlock reads a web_search_tool_result's content.
func searchResultBlock(toolUseID string, content json.RawMessage) (llm.Block, error) {
	b := llm.Block{Type: llm.BlockWebSearchResult, ToolUseID: toolUseID}
	var hits []wireSearchHit
	if err := json.Unmarshal(content, &hits); err == nil {
		b.Content = make([]llm.Block, 0, len(hits))
		for _, h := range hits {
			b.Content = append(b.Content, llm.Block{Type: llm.BlockWebSearchHit, Title: h.Title, URL: h.URL,
				Data: h.EncryptedContent, PageAge: h.PageAge})
		}
		return b, nil
	}
	var e wireSearchError
	if err := json.Unmarshal(content, &e); err != nil || e.ErrorCode == "" {
		return b, protocolf("web_search_tool_result content is neither a list of results nor an error: %.80q", content)
	}
	b.ErrorCode = e.ErrorCode
	return b, nil
}
