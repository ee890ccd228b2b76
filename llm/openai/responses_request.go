package openai

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// encodeResponses checks req and writes the body of a streaming Responses
// request: model, instructions, input, tools, then the sampling members,
// store and stream, always in that order. Nothing is stored on the server
// ("store": false): every request carries the whole conversation, as a
// chat request does, so that forks and retries need no server state.
func encodeResponses(req *llm.Request, cache *jsonenc.Cache, maxParam string, sizeHint int) ([]byte, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	dst := make([]byte, 0, max(sizeHint, 1024))
	dst = append(dst, `{"model":`...)
	dst = jsonenc.AppendString(dst, req.Model)
	if len(req.System) > 0 {
		text, err := systemText(req.System)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `,"instructions":`...)
		dst = cache.AppendText(dst, text)
	}
	dst = append(dst, `,"input":[`...)
	dst, err := appendConversation(dst, 0, req.Messages, appendInputItems)
	if err != nil {
		return nil, err
	}
	dst = append(dst, ']')
	dst, err = appendTools(dst, offered(req), cache, func(dst []byte, t llm.ToolDef, schema []byte) []byte {
		dst = append(dst, `{"type":"function","name":`...)
		dst = jsonenc.AppendString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = cache.AppendText(dst, t.Description)
		}
		dst = append(dst, `,"parameters":`...)
		return append(append(dst, schema...), `,"strict":false}`...)
	})
	if err != nil {
		return nil, err
	}
	if req.MaxTokens > 0 && maxParam != OmitMaxTokens {
		dst = append(dst, `,"max_output_tokens":`...)
		dst = strconv.AppendInt(dst, int64(req.MaxTokens), 10)
	}
	if t := req.Temperature; t != nil {
		dst = append(dst, `,"temperature":`...)
		dst = strconv.AppendFloat(dst, *t, 'f', -1, 64)
	}
	if req.Effort != "" || req.Thinking != nil {
		effort := efforts[req.Effort]
		if effort == "" {
			effort = "medium"
		}
		dst = append(dst, `,"reasoning":{"effort":`...)
		dst = jsonenc.AppendString(dst, effort)
		dst = append(dst, `,"summary":"auto"},"include":["reasoning.encrypted_content"]`...)
	}
	return append(dst, `,"store":false,"stream":true}`...), nil
}

// appendInputItems appends the input items for m after the n written so
// far. A user message's tool results are function_call_output items, the
// rest one user message; an assistant message's reasoning (the thinking
// blocks this provider made, whose ID is a reasoning item's), text and tool
// calls are reasoning, message and function_call items in block order.
func appendInputItems(dst []byte, n int, m llm.Message) ([]byte, int, error) {
	if len(m.Content) == 0 {
		return dst, n, fmt.Errorf("%s message has no content blocks", m.Role)
	}
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	switch m.Role {
	case llm.RoleAssistant:
		return appendAssistantItems(dst, n, m.Content)
	case llm.RoleUser:
		results, rest, err := userParts(m.Content)
		if err != nil {
			return dst, n, err
		}
		for _, r := range results {
			sep()
			dst = append(dst, `{"type":"function_call_output","call_id":`...)
			dst = jsonenc.AppendString(dst, r.id)
			dst = append(dst, `,"output":`...)
			dst = append(jsonenc.AppendString(dst, r.text), '}')
		}
		if len(rest) == 0 {
			return dst, n, nil
		}
		sep()
		dst = append(dst, `{"type":"message","role":"user","content":[`...)
		for i, b := range rest {
			if i > 0 {
				dst = append(dst, ',')
			}
			switch b.Type {
			case llm.BlockText:
				dst = append(dst, `{"type":"input_text","text":`...)
				dst = append(jsonenc.AppendString(dst, b.Text), '}')
			case llm.BlockImage:
				if b.Data == "" || b.MediaType == "" {
					return dst, n, fmt.Errorf("block %d: image needs base64 Data and a MediaType", i)
				}
				dst = append(dst, `{"type":"input_image","image_url":`...)
				dst = append(jsonenc.AppendString(dst, "data:"+b.MediaType+";base64,"+b.Data), '}')
			default:
				return dst, n, fmt.Errorf("block %d has type %q, which a user message cannot carry", i, b.Type)
			}
		}
		return append(dst, "]}"...), n, nil
	}
	return dst, n, fmt.Errorf("role %q is neither user nor assistant", m.Role)
}

// appendAssistantItems appends an assistant message's items: reasoning,
// message and function_call items in block order.
func appendAssistantItems(dst []byte, n int, blocks []llm.Block) ([]byte, int, error) {
	sep := func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
	}
	for i, b := range blocks {
		switch b.Type {
		case llm.BlockText:
			sep()
			dst = append(dst, `{"type":"message","role":"assistant","content":[{"type":"output_text","text":`...)
			dst = append(jsonenc.AppendString(dst, b.Text), "}]}"...)
		case llm.BlockToolUse:
			if b.ID == "" || b.Name == "" {
				return dst, n, fmt.Errorf("block %d: tool_use needs an id and a name", i)
			}
			sep()
			dst = append(dst, `{"type":"function_call","call_id":`...)
			dst = jsonenc.AppendString(dst, b.ID)
			dst = append(dst, `,"name":`...)
			dst = jsonenc.AppendString(dst, b.Name)
			dst = append(dst, `,"arguments":`...)
			dst = append(jsonenc.AppendString(dst, arguments(b.Input)), '}')
		case llm.BlockThinking:
			if !strings.HasPrefix(b.ID, "rs_") || b.Signature == "" {
				continue // not an OpenAI reasoning item: nothing to send back
			}
			sep()
			dst = append(dst, `{"type":"reasoning","id":`...)
			dst = jsonenc.AppendString(dst, b.ID)
			dst = append(dst, `,"summary":[`...)
			if b.Thinking != "" {
				dst = append(dst, `{"type":"summary_text","text":`...)
				dst = append(jsonenc.AppendString(dst, b.Thinking), '}')
			}
			dst = append(dst, `],"encrypted_content":`...)
			dst = append(jsonenc.AppendString(dst, b.Signature), '}')
		case llm.BlockRedactedThinking:
		default:
			return dst, n, fmt.Errorf("block %d has type %q, which an assistant message cannot carry", i, b.Type)
		}
	}
	return dst, n, nil
}
