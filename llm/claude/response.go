package claude

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// wireEvent is the part of a stream event this package reads. The SDK's
// ssestream decodes each event's data into it with encoding/json; every
// event kind shares the struct, and members an event does not carry stay
// zero. Unknown members are ignored, as newer servers may add them.
type wireEvent struct {
	Type         string         `json:"type"`
	Index        int64          `json:"index"`
	Message      wireMessage    `json:"message"`       // message_start
	ContentBlock wireBlockStart `json:"content_block"` // content_block_start
	Delta        wireDelta      `json:"delta"`         // content_block_delta, message_delta
	Usage        wireUsage      `json:"usage"`         // message_delta
}

type wireMessage struct {
	ID         string    `json:"id"`
	Model      string    `json:"model"`
	StopReason string    `json:"stop_reason"` // null until message_delta
	Usage      wireUsage `json:"usage"`
}

type wireBlockStart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	// ToolUseID and Content belong to web_search_tool_result, which
	// arrives whole in its content_block_start.
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}

// wireUsage tells an absent count from a zero one: message_delta's counts
// are cumulative totals that replace message_start's, but only those it
// carries.
type wireUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// block is a content block being accumulated.
type block struct {
	typ       llm.BlockType
	text      strings.Builder // text, or thinking
	signature strings.Builder
	id, name  string
	data      string
	// startInput is a tool_use input given whole in content_block_start;
	// input holds the input_json_delta fragments as they arrived.
	startInput json.RawMessage
	input      []byte
	hasInput   bool
	// result is a web_search_tool_result, complete from its start.
	result *llm.Block
	// stopped is set at content_block_stop: the block is complete, and
	// nothing may extend it any more.
	stopped bool
}

// translator turns stream events into llm events and accumulates the
// message. It checks the grammar as it goes: message_start first and once,
// blocks started in index order, deltas that fit their block, tool input
// that adds up to JSON. It belongs to one attempt and is not safe for
// concurrent use.
type translator struct {
	started    bool
	done       bool
	id, model  string
	stopReason string
	usage      llm.Usage
	blocks     []*block
}

// apply consumes one stream event. It returns the llm event to emit, if any.
// After message_stop, done is set and the caller asks for the response.
func (t *translator) apply(ev *wireEvent) (llm.Event, bool, error) {
	switch ev.Type {
	case "message_start":
		if t.started {
			return llm.Event{}, false, protocolf("a second message_start arrived")
		}
		t.started = true
		t.id, t.model, t.stopReason = ev.Message.ID, ev.Message.Model, ev.Message.StopReason
		t.usage = mergeUsage(llm.Usage{}, ev.Message.Usage)
		return llm.Event{Type: llm.EventStart, Usage: t.usage}, true, nil
	case "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
	default:
		return llm.Event{}, false, nil // unknown event types are for newer clients
	}
	if !t.started {
		return llm.Event{}, false, protocolf("%s arrived before message_start", ev.Type)
	}
	switch ev.Type {
	case "content_block_start":
		return t.start(ev)
	case "content_block_delta":
		if err := t.checkOpen(ev); err != nil {
			return llm.Event{}, false, err
		}
		return t.delta(ev)
	case "content_block_stop":
		if err := t.checkOpen(ev); err != nil {
			return llm.Event{}, false, err
		}
		b, err := t.complete(int(ev.Index))
		if err != nil {
			return llm.Event{}, false, err
		}
		t.blocks[ev.Index].stopped = true
		return llm.Event{Type: llm.EventBlockStop, Index: int(ev.Index), Block: &b}, true, nil
	case "message_delta":
		t.stopReason = ev.Delta.StopReason
		// output_tokens is always the running total; the others only when sent.
		out := int64(0)
		if ev.Usage.OutputTokens != nil {
			out = *ev.Usage.OutputTokens
		}
		t.usage = mergeUsage(t.usage, ev.Usage)
		t.usage.OutputTokens = out
	case "message_stop":
		t.done = true
	}
	return llm.Event{}, false, nil
}

// start opens a block. Blocks start in index order with no gaps.
func (t *translator) start(ev *wireEvent) (llm.Event, bool, error) {
	if ev.Index != int64(len(t.blocks)) {
		return llm.Event{}, false, protocolf("content_block_start for content block %d; expected index %d", ev.Index, len(t.blocks))
	}
	cb := &ev.ContentBlock
	head := &llm.Block{Type: llm.BlockType(cb.Type)}
	b := &block{typ: head.Type}
	switch head.Type {
	case llm.BlockText:
		head.Text = cb.Text
		b.text.WriteString(cb.Text)
	case llm.BlockToolUse, llm.BlockServerToolUse:
		head.ID, head.Name = cb.ID, cb.Name
		b.id, b.name, b.startInput = cb.ID, cb.Name, cb.Input
	case llm.BlockWebSearchResult:
		r, err := searchResultBlock(cb.ToolUseID, cb.Content)
		if err != nil {
			return llm.Event{}, false, err
		}
		b.result, head = &r, &r
	case llm.BlockThinking:
		head.Thinking, head.Signature = cb.Thinking, cb.Signature
		b.text.WriteString(cb.Thinking)
		b.signature.WriteString(cb.Signature)
	case llm.BlockRedactedThinking:
		head.Data = cb.Data
		b.data = cb.Data
	default:
		return llm.Event{}, false, protocolf("content block of type %q, which this provider does not support", cb.Type)
	}
	t.blocks = append(t.blocks, b)
	return llm.Event{Type: llm.EventBlockStart, Index: int(ev.Index), Block: head}, true, nil
}

// checkOpen checks that a delta or stop names a block that has started
// and not stopped: a block handed over complete at its stop (the engine
// may act on it then) never changes afterwards.
func (t *translator) checkOpen(ev *wireEvent) error {
	if ev.Index < 0 || ev.Index >= int64(len(t.blocks)) {
		return protocolf("%s for content block %d, but there are only %d content blocks", ev.Type, ev.Index, len(t.blocks))
	}
	if t.blocks[ev.Index].stopped {
		return protocolf("%s for content block %d after its content_block_stop", ev.Type, ev.Index)
	}
	return nil
}

// deltaBlock is the block type each delta kind extends.
var deltaBlock = map[string]llm.BlockType{
	"text_delta":       llm.BlockText,
	"citations_delta":  llm.BlockText,
	"input_json_delta": llm.BlockToolUse,
	"thinking_delta":   llm.BlockThinking,
	"signature_delta":  llm.BlockThinking,
}

func (t *translator) delta(ev *wireEvent) (llm.Event, bool, error) {
	d := &ev.Delta
	b := t.blocks[ev.Index]
	if want, ok := deltaBlock[d.Type]; ok && b.typ != want && !(want == llm.BlockToolUse && b.typ == llm.BlockServerToolUse) {
		return llm.Event{}, false, protocolf("%s for content block %d, which is a %s block", d.Type, ev.Index, b.typ)
	}
	e := llm.Event{Type: llm.EventDelta, Index: int(ev.Index)}
	switch d.Type {
	case "text_delta":
		b.text.WriteString(d.Text)
		e.DeltaKind, e.Delta = llm.DeltaText, d.Text
	case "input_json_delta":
		b.input = append(b.input, d.PartialJSON...)
		b.hasInput = true
		e.DeltaKind, e.Delta = llm.DeltaInputJSON, d.PartialJSON
	case "thinking_delta":
		b.text.WriteString(d.Thinking)
		e.DeltaKind, e.Delta = llm.DeltaThinking, d.Thinking
	case "signature_delta":
		b.signature.WriteString(d.Signature)
		e.DeltaKind, e.Delta = llm.DeltaSignature, d.Signature
	default:
		return llm.Event{}, false, nil // citations and newer delta kinds
	}
	return e, true, nil
}

// checkInput reports tool input fragments that do not add up to JSON.
func (t *translator) checkInput(index int) error {
	in := t.blocks[index].input
	if len(in) > 0 && !json.Valid(in) {
		return protocolf("tool_use input of content block %d is not valid JSON: %.80q", index, in)
	}
	return nil
}

// response returns the complete message. It is valid once done is set.
func (t *translator) response(requestID string) (*llm.Response, error) {
	resp := &llm.Response{
		ID:         t.id,
		Model:      t.model,
		StopReason: llm.StopReason(t.stopReason),
		Usage:      t.usage,
		RequestID:  requestID,
		Content:    make([]llm.Block, 0, len(t.blocks)),
	}
	for i := range t.blocks {
		b, err := t.complete(i)
		if err != nil {
			return nil, err
		}
		resp.Content = append(resp.Content, b)
	}
	return resp, nil
}

// complete returns block i as it stands: the whole block once it has
// stopped.
func (t *translator) complete(i int) (llm.Block, error) {
	b := t.blocks[i]
	out := llm.Block{Type: b.typ}
	switch b.typ {
	case llm.BlockText:
		out.Text = b.text.String()
	case llm.BlockWebSearchResult:
		out = b.result.Clone()
	case llm.BlockToolUse, llm.BlockServerToolUse:
		if err := t.checkInput(i); err != nil {
			return llm.Block{}, err
		}
		out.ID, out.Name = b.id, b.name
		switch {
		case len(b.input) > 0:
			out.Input = b.input[:len(b.input):len(b.input)]
		case len(b.startInput) > 0 && json.Valid(b.startInput):
			out.Input = append(json.RawMessage(nil), b.startInput...)
		default:
			out.Input = json.RawMessage(`{}`)
		}
	case llm.BlockThinking:
		out.Thinking, out.Signature = b.text.String(), b.signature.String()
	case llm.BlockRedactedThinking:
		out.Data = b.data
	}
	return out, nil
}

// mergeUsage returns u with the counts w carries.
func mergeUsage(u llm.Usage, w wireUsage) llm.Usage {
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&u.InputTokens, w.InputTokens)
	set(&u.OutputTokens, w.OutputTokens)
	set(&u.CacheCreationInputTokens, w.CacheCreationInputTokens)
	set(&u.CacheReadInputTokens, w.CacheReadInputTokens)
	return u
}

func protocolf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}
