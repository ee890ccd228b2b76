package openai

import (
	"encoding/json"
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// respEvent is the part of a Responses stream event this package reads.
type respEvent struct {
	Type         string          `json:"type"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        json.RawMessage `json:"delta"`
	Item         respOutItem     `json:"item"`
	Response     respResponse    `json:"response"`
	Code         json.RawMessage `json:"code"`
	Message      string          `json:"message"`
}

type respOutItem struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

type respResponse struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
	Output []respOutItem `json:"output"`
}

// respTranslator reads a Responses stream: each output item becomes a
// block (a message a text block, a function call a tool_use block, a
// reasoning item a thinking block whose Signature is its encrypted_content
// and ID its item id), in the order the items are announced; other item
// kinds (the server's own tools) are not part of the response.
type respTranslator struct {
	started, end bool
	final        respResponse
	blocks
	items   map[int]int // output_index → block index
	summary map[int]int // block index → last summary_index seen
}

func (t *respTranslator) apply(name string, data []byte) ([]llm.Event, error) {
	var ev respEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, protocolf("event %s is not JSON (%v): %.120q", name, err, data)
	}
	if ev.Type == "" {
		ev.Type = name
	}
	var evs []llm.Event
	if !t.started {
		t.started, t.items, t.summary = true, map[int]int{}, map[int]int{}
		evs = append(evs, llm.Event{Type: llm.EventStart})
	}
	switch ev.Type {
	case "response.created", "response.in_progress":
		t.final.ID, t.final.Model = ev.Response.ID, ev.Response.Model
	case "response.output_item.added":
		evs = t.added(evs, ev.OutputIndex, ev.Item)
	case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		bi, ok := t.items[ev.OutputIndex]
		if !ok {
			return nil, protocolf("%s for output item %d, which was not announced", ev.Type, ev.OutputIndex)
		}
		b := t.list[bi]
		if ev.Type == "response.reasoning_summary_text.delta" {
			if last, seen := t.summary[bi]; seen && ev.SummaryIndex != last {
				// Summary parts are paragraphs.
				if e, ok := b.add(bi, json.RawMessage(`"\n\n"`)); ok {
					evs = append(evs, e)
				}
			}
			t.summary[bi] = ev.SummaryIndex
		}
		if e, ok := b.add(bi, ev.Delta); ok {
			evs = append(evs, e)
		}
	case "response.output_item.done":
		evs = t.closeItem(evs, ev.OutputIndex, ev.Item)
	case "response.completed", "response.incomplete":
		t.end, t.final = true, ev.Response
		if len(t.items) == 0 {
			for i, it := range ev.Response.Output {
				evs = t.closeItem(t.added(evs, i, it), i, it) // a server that sends only the end
			}
		}
	case "response.failed":
		e := wireError{Message: "the response failed", Type: "server_error"}
		if r := ev.Response.Error; r != nil {
			e = wireError{Message: r.Message, Code: r.Code, Type: r.Code}
		}
		return nil, &streamError{e}
	case "error":
		return nil, &streamError{wireError{Message: ev.Message, Code: codeText(ev.Code), Type: codeText(ev.Code)}}
	}
	return evs, nil
}

// added opens the block of a new output item.
func (t *respTranslator) added(evs []llm.Event, index int, it respOutItem) []llm.Event {
	b := &block{}
	switch it.Type {
	case "message":
		b.typ = llm.BlockText
	case "function_call":
		b.typ, b.id, b.name = llm.BlockToolUse, it.CallID, it.Name
	case "reasoning":
		b.typ, b.id = llm.BlockThinking, it.ID
	default:
		return evs
	}
	bi, start := t.open(b)
	t.items[index] = bi
	return append(evs, start)
}

// closeItem completes an item's block from the item itself: the arguments, text
// or summary a server sent only there, and a reasoning item's encrypted
// content.
func (t *respTranslator) closeItem(evs []llm.Event, index int, it respOutItem) []llm.Event {
	bi, ok := t.items[index]
	if !ok {
		return evs
	}
	b := t.list[bi]
	var whole string
	switch it.Type {
	case "function_call":
		whole = it.Arguments
		if b.name == "" {
			b.name = it.Name
		}
	case "reasoning":
		b.sig = it.EncryptedContent
		var parts []string
		for _, s := range it.Summary {
			parts = append(parts, s.Text)
		}
		whole = strings.Join(parts, "\n\n")
	case "message":
		for _, c := range it.Content {
			whole += c.Text + c.Refusal
		}
	}
	if b.text.Len() == 0 && len(b.frag.pending) == 0 && whole != "" {
		b.text.WriteString(whole)
		evs = append(evs, llm.Event{Type: llm.EventDelta, Index: bi, DeltaKind: deltaKind(b.typ), Delta: whole})
	}
	return evs
}

func (t *respTranslator) finished() bool { return t.end }
func (t *respTranslator) done() bool     { return t.end }

func (t *respTranslator) response(requestID string) ([]llm.Event, *llm.Response, error) {
	evs, content := t.close()
	f := &t.final
	resp := &llm.Response{ID: f.ID, Model: f.Model, Content: content, RequestID: requestID, StopReason: llm.StopEndTurn}
	switch {
	case f.IncompleteDetails != nil && f.IncompleteDetails.Reason == "max_output_tokens":
		resp.StopReason = llm.StopMaxTokens
	case f.IncompleteDetails != nil && f.IncompleteDetails.Reason == "content_filter":
		resp.StopReason = llm.StopRefusal
	case t.hasToolUse():
		resp.StopReason = llm.StopToolUse
	}
	if u := f.Usage; u != nil {
		var cached int64
		if u.InputTokensDetails != nil {
			cached = min(u.InputTokensDetails.CachedTokens, u.InputTokens)
		}
		resp.Usage = llm.Usage{InputTokens: u.InputTokens - cached, CacheReadInputTokens: cached, OutputTokens: u.OutputTokens}
	}
	return evs, resp, nil
}
