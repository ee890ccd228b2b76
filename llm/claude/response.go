package claude

import (
	"encoding/json"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cohort-dev/cohort/llm"
)

// translator turns the SDK's stream events into llm events and accumulates
// the message with the SDK's Message.Accumulate. It belongs to one attempt
// and is not safe for concurrent use.
type translator struct {
	msg     anthropic.Message
	started bool
	done    bool
	// inputs holds the input_json_delta fragments of each tool_use block as
	// they arrived, to check that they form JSON: Accumulate would silently
	// replace broken input with {}.
	inputs map[int64][]byte
}

// apply consumes one stream event. It returns the llm event to emit, if any.
// After message_stop, done is set and the caller asks for the response.
func (t *translator) apply(ev anthropic.MessageStreamEventUnion) (llm.Event, bool, error) {
	switch ev.Type {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
	default:
		return llm.Event{}, false, nil // unknown event types are for newer clients
	}
	if ev.Type == "message_start" {
		if t.started {
			return llm.Event{}, false, protocolf("a second message_start arrived")
		}
		t.started = true
	} else if !t.started {
		return llm.Event{}, false, protocolf("%s arrived before message_start", ev.Type)
	}
	if err := t.msg.Accumulate(ev); err != nil {
		return llm.Event{}, false, protocolf("%v", err)
	}
	idx := int(ev.Index)
	switch ev.Type {
	case "message_start":
		return llm.Event{Type: llm.EventStart, Usage: usage(t.msg.Usage)}, true, nil
	case "content_block_start":
		b, err := startBlock(ev.ContentBlock)
		if err != nil {
			return llm.Event{}, false, err
		}
		return llm.Event{Type: llm.EventBlockStart, Index: idx, Block: b}, true, nil
	case "content_block_delta":
		return t.delta(ev)
	case "content_block_stop":
		if err := t.checkInput(ev.Index); err != nil {
			return llm.Event{}, false, err
		}
		return llm.Event{Type: llm.EventBlockStop, Index: idx}, true, nil
	case "message_stop":
		t.done = true
	}
	return llm.Event{}, false, nil
}

// deltaBlock is the block type each delta kind extends.
var deltaBlock = map[string]string{
	"text_delta":       "text",
	"citations_delta":  "text",
	"input_json_delta": "tool_use",
	"thinking_delta":   "thinking",
	"signature_delta":  "thinking",
}

func (t *translator) delta(ev anthropic.MessageStreamEventUnion) (llm.Event, bool, error) {
	if want, ok := deltaBlock[ev.Delta.Type]; ok {
		// Accumulate has checked the index.
		if got := t.msg.Content[ev.Index].Type; got != want {
			return llm.Event{}, false, protocolf("%s for content block %d, which is a %s block", ev.Delta.Type, ev.Index, got)
		}
	}
	e := llm.Event{Type: llm.EventDelta, Index: int(ev.Index)}
	switch ev.Delta.Type {
	case "text_delta":
		e.DeltaKind, e.Delta = llm.DeltaText, ev.Delta.Text
	case "input_json_delta":
		if t.inputs == nil {
			t.inputs = make(map[int64][]byte)
		}
		t.inputs[ev.Index] = append(t.inputs[ev.Index], ev.Delta.PartialJSON...)
		e.DeltaKind, e.Delta = llm.DeltaInputJSON, ev.Delta.PartialJSON
	case "thinking_delta":
		e.DeltaKind, e.Delta = llm.DeltaThinking, ev.Delta.Thinking
	case "signature_delta":
		e.DeltaKind, e.Delta = llm.DeltaSignature, ev.Delta.Signature
	default:
		return llm.Event{}, false, nil // citations and newer delta kinds
	}
	return e, true, nil
}

// checkInput reports tool input fragments that do not add up to JSON.
func (t *translator) checkInput(index int64) error {
	in, ok := t.inputs[index]
	if ok && len(in) > 0 && !json.Valid(in) {
		return protocolf("tool_use input of content block %d is not valid JSON: %.80q", index, in)
	}
	return nil
}

// response returns the complete message. It is valid once done is set.
func (t *translator) response(requestID string) (*llm.Response, error) {
	resp := &llm.Response{
		ID:         t.msg.ID,
		Model:      string(t.msg.Model),
		StopReason: llm.StopReason(t.msg.StopReason),
		Usage:      usage(t.msg.Usage),
		RequestID:  requestID,
		Content:    make([]llm.Block, 0, len(t.msg.Content)),
	}
	for i, cb := range t.msg.Content {
		b := llm.Block{Type: llm.BlockType(cb.Type)}
		switch b.Type {
		case llm.BlockText:
			b.Text = cb.Text
		case llm.BlockToolUse:
			if err := t.checkInput(int64(i)); err != nil {
				return nil, err
			}
			b.ID, b.Name = cb.ID, cb.Name
			b.Input = json.RawMessage(`{}`)
			if in, ok := t.inputs[int64(i)]; ok && len(in) > 0 {
				b.Input = append(json.RawMessage(nil), in...)
			} else if len(cb.Input) > 0 && json.Valid(cb.Input) {
				b.Input = append(json.RawMessage(nil), cb.Input...)
			}
		case llm.BlockThinking:
			b.Thinking, b.Signature = cb.Thinking, cb.Signature
		case llm.BlockRedactedThinking:
			b.Data = cb.Data
		default:
			return nil, protocolf("content block %d has type %q, which this provider does not support", i, cb.Type)
		}
		resp.Content = append(resp.Content, b)
	}
	return resp, nil
}

// startBlock is the head of a block as content_block_start announces it.
func startBlock(cb anthropic.ContentBlockStartEventContentBlockUnion) (*llm.Block, error) {
	b := &llm.Block{Type: llm.BlockType(cb.Type)}
	switch b.Type {
	case llm.BlockText:
		b.Text = cb.Text
	case llm.BlockToolUse:
		b.ID, b.Name = cb.ID, cb.Name
	case llm.BlockThinking:
		b.Thinking, b.Signature = cb.Thinking, cb.Signature
	case llm.BlockRedactedThinking:
		b.Data = cb.Data
	default:
		return nil, protocolf("content block of type %q, which this provider does not support", cb.Type)
	}
	return b, nil
}

func usage(u anthropic.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:              u.InputTokens,
		OutputTokens:             u.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens,
	}
}

func protocolf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}
