package openai

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// efforts maps the llm effort levels to reasoning_effort values.
var efforts = map[string]string{"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh"}

// encodeChat checks req and writes the body of a streaming chat completions
// request: model, messages, tools, then the sampling members, then stream
// and stream_options, always in that order and escaped the same way, so the
// same request gives the same bytes. The result shares no memory with req.
func encodeChat(req *llm.Request, cache *jsonenc.Cache, maxParam string, sizeHint int) ([]byte, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	dst := make([]byte, 0, max(sizeHint, 1024))
	dst = append(dst, `{"model":`...)
	dst = jsonenc.AppendString(dst, req.Model)
	dst = append(dst, `,"messages":[`...)
	n := 0
	if len(req.System) > 0 {
		text, err := systemText(req.System)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `{"role":"system","content":`...)
		dst = append(cache.AppendText(dst, text), '}')
		n++
	}
	dst, err := appendConversation(dst, n, req.Messages, appendChatMessage)
	if err != nil {
		return nil, err
	}
	dst = append(dst, ']')
	dst, err = appendTools(dst, offered(req), cache, func(dst []byte, t llm.ToolDef, schema []byte) []byte {
		dst = append(dst, `{"type":"function","function":{"name":`...)
		dst = jsonenc.AppendString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = cache.AppendText(dst, t.Description)
		}
		dst = append(dst, `,"parameters":`...)
		return append(append(dst, schema...), "}}"...)
	})
	if err != nil {
		return nil, err
	}
	if req.MaxTokens > 0 && maxParam != OmitMaxTokens {
		dst = append(dst, `,"`+maxParam+`":`...)
		dst = strconv.AppendInt(dst, int64(req.MaxTokens), 10)
	}
	dst = appendSampling(dst, req)
	if req.Effort != "" {
		dst = append(dst, `,"reasoning_effort":`...)
		dst = jsonenc.AppendString(dst, efforts[req.Effort])
	}
	return append(dst, `,"stream":true,"stream_options":{"include_usage":true}}`...), nil
}

// appendSampling appends temperature and stop.
func appendSampling(dst []byte, req *llm.Request) []byte {
	if t := req.Temperature; t != nil {
		dst = append(dst, `,"temperature":`...)
		dst = strconv.AppendFloat(dst, *t, 'f', -1, 64)
	}
	if len(req.StopSeqs) > 0 {
		dst = append(dst, `,"stop":[`...)
		for i, s := range req.StopSeqs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(dst, s)
		}
		dst = append(dst, ']')
	}
	return dst
}

// checkRequest validates the scalar parts of req.
func checkRequest(req *llm.Request) error {
	switch {
	case req == nil:
		return fmt.Errorf("openai: nil request")
	case req.Model == "":
		return fmt.Errorf("openai: request names no model; set Request.Model to a model the server serves (see its /v1/models)")
	case req.MaxTokens < 0:
		return fmt.Errorf("openai: MaxTokens is %d; it must be positive", req.MaxTokens)
	case req.Effort != "" && efforts[req.Effort] == "":
		return fmt.Errorf("openai: effort %q is not one of low, medium, high, xhigh, max", req.Effort)
	case req.Temperature != nil && (math.IsNaN(*req.Temperature) || *req.Temperature < 0 || *req.Temperature > 2):
		return fmt.Errorf("openai: temperature %v is not a number from 0 to 2", *req.Temperature)
	}
	return nil
}

// systemText joins the system blocks into one text: the chat templates of
// most local models accept one system message, first.
func systemText(blocks []llm.Block) (string, error) {
	parts := make([]string, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != llm.BlockText {
			return "", fmt.Errorf("openai: system block %d has type %q; the system prompt holds text blocks only", i, b.Type)
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n\n"), nil
}

// appendConversation appends the items (messages, input items) of msgs,
// after the n written before.
func appendConversation(dst []byte, n int, msgs []llm.Message, item func([]byte, int, llm.Message) ([]byte, int, error)) ([]byte, error) {
	for i, m := range msgs {
		var err error
		if dst, n, err = item(dst, n, m); err != nil {
			return nil, fmt.Errorf("openai: message %d: %w", i, err)
		}
	}
	return dst, nil
}

// appendTools appends the tools member, each tool written by tool with its
// checked and compacted schema.
// offered are the tools a request sends: the OpenAI protocols have no
// deferred loading, so a deferred tool (llm.ToolDef.Defer) is left out
// until a tool_reference of the conversation loads it, and then sent
// after every other tool, in the order the references came. The array is
// the same bytes from one request to the next until a tool is loaded.
func offered(req *llm.Request) []llm.ToolDef {
	var out []llm.ToolDef
	for _, t := range req.Tools {
		if !t.Defer {
			out = append(out, t)
		}
	}
	if len(out) == len(req.Tools) {
		return req.Tools
	}
	for _, name := range llm.LoadedTools(req.Messages) {
		if i := slices.IndexFunc(req.Tools, func(t llm.ToolDef) bool { return t.Defer && t.Name == name }); i >= 0 {
			out = append(out, req.Tools[i])
		}
	}
	return out
}

func appendTools(dst []byte, tools []llm.ToolDef, cache *jsonenc.Cache, tool func([]byte, llm.ToolDef, []byte) []byte) ([]byte, error) {
	if len(tools) == 0 {
		return dst, nil
	}
	dst = append(dst, `,"tools":[`...)
	for i, t := range tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		if t.Name == "" {
			return nil, fmt.Errorf("openai: tool %d: tool has no name", i)
		}
		schema, err := cache.Schema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("openai: tool %d (%s): input schema: %w", i, t.Name, err)
		}
		dst = tool(dst, t, schema)
	}
	return append(dst, ']'), nil
}

// appendChatMessage appends the chat messages for m after the n written so
// far: a user message is a tool message per tool_result, then a user
// message with the rest; an assistant message is one message with its
// text and tool calls (thinking stays out: see the package doc).
func appendChatMessage(dst []byte, n int, m llm.Message) ([]byte, int, error) {
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
		text, calls, err := assistantParts(m.Content)
		if err != nil {
			return dst, n, err
		}
		sep()
		dst = append(dst, `{"role":"assistant","content":`...)
		if text == "" && len(calls) > 0 {
			dst = append(dst, "null"...)
		} else {
			dst = jsonenc.AppendString(dst, text)
		}
		if len(calls) > 0 {
			dst = append(dst, `,"tool_calls":[`...)
			for i, c := range calls {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, `{"id":`...)
				dst = jsonenc.AppendString(dst, c.ID)
				dst = append(dst, `,"type":"function","function":{"name":`...)
				dst = jsonenc.AppendString(dst, c.Name)
				dst = append(dst, `,"arguments":`...)
				dst = append(jsonenc.AppendString(dst, arguments(c.Input)), "}}"...)
			}
			dst = append(dst, ']')
		}
		return append(dst, '}'), n, nil
	case llm.RoleUser:
		results, rest, err := userParts(m.Content)
		if err != nil {
			return dst, n, err
		}
		for _, r := range results {
			sep()
			dst = append(dst, `{"role":"tool","tool_call_id":`...)
			dst = jsonenc.AppendString(dst, r.id)
			dst = append(dst, `,"content":`...)
			dst = append(jsonenc.AppendString(dst, r.text), '}')
		}
		if len(rest) == 0 {
			return dst, n, nil
		}
		sep()
		dst, err = appendUserContent(append(dst, `{"role":"user","content":`...), rest)
		return append(dst, '}'), n, err
	}
	return dst, n, fmt.Errorf("role %q is neither user nor assistant", m.Role)
}

// assistantParts returns an assistant message's text (its text blocks
// joined as the server streamed them: one content string) and tool calls.
func assistantParts(blocks []llm.Block) (string, []llm.Block, error) {
	var text strings.Builder
	var calls []llm.Block
	for i, b := range blocks {
		switch b.Type {
		case llm.BlockText:
			text.WriteString(b.Text)
		case llm.BlockToolUse:
			if b.ID == "" || b.Name == "" {
				return "", nil, fmt.Errorf("block %d: tool_use needs an id and a name", i)
			}
			calls = append(calls, b)
		case llm.BlockThinking, llm.BlockRedactedThinking:
		default:
			return "", nil, fmt.Errorf("block %d has type %q, which an assistant message cannot carry", i, b.Type)
		}
	}
	return text.String(), calls, nil
}

// arguments is a tool_use input as the text of a tool call's arguments:
// the JSON as it is, or the text itself when the input is a JSON string
// (arguments the model wrote that were not an object), so that the server
// sees again exactly what its model wrote.
func arguments(input json.RawMessage) string {
	if len(input) == 0 {
		return "{}"
	}
	if input[0] == '"' {
		var s string
		if json.Unmarshal(input, &s) == nil {
			return s
		}
	}
	return string(input)
}

// toolResult is a tool_result block as these protocols carry it.
type toolResult struct{ id, text string }

// The protocols have no is_error flag: an error result's text is wrapped
// in these tags, as Claude Code renders a tool error.
const (
	errorOpen  = "<tool_use_error>"
	errorClose = "</tool_use_error>"
)

// userParts splits a user message into its tool results and the rest, the
// results' images included (a tool message or function_call_output cannot
// carry them; they go in the user message after the results). An error
// result's text is wrapped in <tool_use_error> tags.
func userParts(blocks []llm.Block) ([]toolResult, []llm.Block, error) {
	var results []toolResult
	var rest []llm.Block
	for i, b := range blocks {
		if b.Type != llm.BlockToolResult {
			rest = append(rest, b)
			continue
		}
		if b.ToolUseID == "" {
			return nil, nil, fmt.Errorf("block %d: tool_result has no tool_use_id", i)
		}
		var texts []string
		for j, c := range b.Content {
			switch c.Type {
			case llm.BlockText:
				texts = append(texts, c.Text)
			case llm.BlockImage:
				rest = append(rest, llm.Text("(The image returned by tool call "+b.ToolUseID+":)"), c)
			case llm.BlockToolReference:
				// The tool is in the array from this request on (offered).
				texts = append(texts, "Loaded "+c.Name+": it is in your tools now; call it directly.")
			default:
				return nil, nil, fmt.Errorf("block %d: tool_result content %d has type %q; only text, image and tool_reference are allowed", i, j, c.Type)
			}
		}
		text := strings.Join(texts, "\n")
		if b.IsError {
			text = errorOpen + text + errorClose
		}
		results = append(results, toolResult{b.ToolUseID, text})
	}
	return results, rest, nil
}

// appendUserContent appends a user message's content: a string when it is
// one text block, else an array of text and image_url parts.
func appendUserContent(dst []byte, blocks []llm.Block) ([]byte, error) {
	if len(blocks) == 1 && blocks[0].Type == llm.BlockText {
		return jsonenc.AppendString(dst, blocks[0].Text), nil
	}
	dst = append(dst, '[')
	for i, b := range blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch b.Type {
		case llm.BlockText:
			dst = append(dst, `{"type":"text","text":`...)
			dst = append(jsonenc.AppendString(dst, b.Text), '}')
		case llm.BlockImage:
			if b.Data == "" || b.MediaType == "" {
				return dst, fmt.Errorf("block %d: image needs base64 Data and a MediaType", i)
			}
			dst = append(dst, `{"type":"image_url","image_url":{"url":`...)
			dst = append(jsonenc.AppendString(dst, "data:"+b.MediaType+";base64,"+b.Data), "}}"...)
		default:
			return dst, fmt.Errorf("block %d has type %q, which a user message cannot carry", i, b.Type)
		}
	}
	return append(dst, ']'), nil
}
