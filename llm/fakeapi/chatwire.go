package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// The OpenAI chat completions request as the fake reads it. A request is
// translated into the same provider-neutral Request the Messages API gives,
// so that policies, scripts, validation and the cache simulator serve both:
//
//   - system (and developer) messages become the system prompt; they must
//     come before every other message, as the chat templates of most local
//     models require;
//   - a user message becomes a user message of text (and image) blocks;
//   - an assistant message becomes an assistant message: its
//     reasoning_content (or reasoning) a thinking block, its content a text
//     block, each tool call a tool_use block whose Input is the arguments
//     when they are a JSON object and the arguments as a JSON string when
//     they are not (the model wrote them; the API does not check them);
//   - tool messages become tool_result blocks of one user message, together
//     with the user message that follows them, if any; one whose text is
//     wrapped in <tool_use_error> tags is an error result of the text
//     inside, which is how llm/openai marks one (the protocol has no
//     is_error).
//
// Then the Messages API's rules apply: roles alternate (two assistant
// messages in a row are a client bug the fake reports), every tool call is
// answered by the next message and every tool result answers one.

// chatWire is the body of POST /v1/chat/completions.
type chatWire struct {
	Model         *string           `json:"model"`
	Messages      *[]chatMessage    `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	Stop                json.RawMessage `json:"stop"`
}

type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ToolCalls        []chatToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// openAIToolName is OpenAI's rule for function names.
var openAIToolName = lazyre.New(`^[a-zA-Z0-9_-]{1,64}$`)

// decodeChat decodes and validates a chat completions body.
func decodeChat(body []byte) (*Request, *apiError) {
	var w chatWire
	if err := json.Unmarshal(body, &w); err != nil {
		if !json.Valid(body) {
			return nil, invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)")
		}
		return nil, invalid("request body: %v", err)
	}
	if w.Model == nil || *w.Model == "" {
		return nil, invalid("you must provide a model parameter")
	}
	if w.Messages == nil || len(*w.Messages) == 0 {
		return nil, invalid("[] is too short - 'messages'")
	}
	req := &Request{API: APIChat, Model: *w.Model, Stream: w.Stream, autoCache: true}
	req.includeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	switch {
	case w.MaxCompletionTokens != nil:
		req.MaxTokens = *w.MaxCompletionTokens
	case w.MaxTokens != nil:
		req.MaxTokens = *w.MaxTokens
	}
	if req.MaxTokens < 0 {
		return nil, invalid("max_tokens: %d is less than the minimum of 1", req.MaxTokens)
	}
	tools, e := chatTools(w.Tools)
	if e != nil {
		return nil, e
	}
	req.Tools = tools
	if e := chatMessages(req, *w.Messages); e != nil {
		return nil, e
	}
	if e := validate(req); e != nil {
		return nil, e
	}
	return req, nil
}

func chatTools(raws []json.RawMessage) ([]Tool, *apiError) {
	var out []Tool
	for i, raw := range raws {
		var t chatTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, invalid("tools[%d]: %v", i, err)
		}
		if t.Type != "function" || t.Function == nil {
			return nil, invalid("tools[%d].type: only \"function\" tools are supported, with a \"function\" object", i)
		}
		f := t.Function
		if !openAIToolName.MatchString(f.Name) {
			return nil, invalid("Invalid 'tools[%d].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$' (got %q).", i, f.Name)
		}
		schema := f.Parameters
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, Tool{Name: f.Name, Description: f.Description, InputSchema: schema, raw: raw, schema: schemaTypeOf(schema)})
	}
	return out, nil
}

// convo builds a Request's system prompt and messages from the items of
// an OpenAI conversation: tool results wait for the user message that
// follows them, and consecutive assistant items make one message.
type convo struct {
	req     *Request
	pending []Block // tool results waiting for the user message
}

// system adds a system (or developer) message, which must come first.
func (c *convo) system(blocks []Block, role, where string) *apiError {
	if len(c.req.Messages) > 0 || c.pending != nil {
		return invalid("%s: a %s message must come before the conversation (the chat templates of local models accept it only first)", where, role)
	}
	c.req.System = append(c.req.System, blocks...)
	return nil
}

// user adds a user message, after the tool results waiting for one.
func (c *convo) user(blocks []Block) {
	if c.pending != nil {
		blocks = append(c.pending, blocks...)
		c.pending = nil
	}
	c.req.Messages = append(c.req.Messages, Message{Role: "user", Content: blocks})
}

// result adds a tool result.
func (c *convo) result(id string, content []Block) {
	if c.pending == nil {
		c.pending = []Block{}
	}
	c.pending = append(c.pending, resultBlock(id, content))
}

// flush ends the tool results that no user message followed.
func (c *convo) flush() {
	if c.pending != nil {
		c.req.Messages = append(c.req.Messages, Message{Role: "user", Content: c.pending})
		c.pending = nil
	}
}

// assistant returns the assistant message that takes the next blocks: the
// last message when it is one, else a new one.
func (c *convo) assistant() *Message {
	c.flush()
	if n := len(c.req.Messages); n > 0 && c.req.Messages[n-1].Role == "assistant" {
		return &c.req.Messages[n-1]
	}
	c.req.Messages = append(c.req.Messages, Message{Role: "assistant"})
	return &c.req.Messages[len(c.req.Messages)-1]
}

// chatMessages translates the messages into req.System and req.Messages.
func chatMessages(req *Request, msgs []chatMessage) *apiError {
	c := &convo{req: req}
	for i, m := range msgs {
		where := fmt.Sprintf("messages[%d]", i)
		blocks, e := chatContent(m.Content, where, m.Role == "user")
		if e != nil {
			return e
		}
		switch m.Role {
		case "system", "developer":
			if e := c.system(blocks, m.Role, where); e != nil {
				return e
			}
		case "user":
			c.user(blocks)
		case "assistant":
			blocks, e := chatAssistant(m, where)
			if e != nil {
				return e
			}
			c.flush()
			req.Messages = append(req.Messages, Message{Role: "assistant", Content: blocks})
		case "tool":
			if prev := i - 1; prev < 0 || (msgs[prev].Role != "tool" && len(msgs[prev].ToolCalls) == 0) {
				return invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (%s)", where)
			}
			if m.ToolCallID == "" {
				return invalid("Missing required parameter: '%s.tool_call_id'.", where)
			}
			c.result(m.ToolCallID, blocks)
		default:
			return invalid("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'. (%s.role)", m.Role, where)
		}
	}
	c.flush()
	return nil
}

func chatAssistant(m chatMessage, where string) ([]Block, *apiError) {
	var blocks []Block
	thought := m.ReasoningContent
	if thought == nil {
		thought = m.Reasoning
	}
	if thought != nil && *thought != "" {
		blocks = append(blocks, Block{Type: "thinking", Thinking: *thought})
	}
	text, e := chatContent(m.Content, where, false)
	if e != nil {
		return nil, e
	}
	for _, b := range text {
		if b.Text != "" {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) == 0 && len(m.ToolCalls) == 0 {
		// An assistant turn with nothing to say (its thinking dropped):
		// OpenAI accepts it; it stands as an empty text block.
		blocks = append(blocks, Block{Type: "text"})
	}
	for j, c := range m.ToolCalls {
		if c.ID == "" || c.Function.Name == "" {
			return nil, invalid("%s.tool_calls[%d]: a tool call needs an id and a function name", where, j)
		}
		blocks = append(blocks, Block{Type: "tool_use", ID: c.ID, Name: c.Function.Name, Input: argsInput(c.Function.Arguments)})
	}
	return blocks, nil
}

// chatContent decodes a message's content: a string, null, or an array of
// parts. Images are allowed where images is set.
func chatContent(raw json.RawMessage, where string, images bool) ([]Block, *apiError) {
	return contentBlocks(raw, where, func(k int, p chatPart) (Block, *apiError) {
		switch {
		case p.Type == "text":
			return Block{Type: "text", Text: p.Text}, nil
		case p.Type == "image_url" && images && p.ImageURL != nil:
			return imageBlock(p.ImageURL.URL), nil
		}
		return Block{}, invalid("Invalid value: '%s'. Supported values are: 'text'%s. (%s.content[%d].type)", p.Type, map[bool]string{true: " and 'image_url'"}[images], where, k)
	})
}

// contentBlocks decodes content that is a string (one text block), null
// (none) or a list of parts, each turned into a block by part.
func contentBlocks[P any](raw json.RawMessage, where string, part func(int, P) (Block, *apiError)) ([]Block, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, invalid("%s: %v", where, err)
		}
		return []Block{{Type: "text", Text: s}}, nil
	}
	var parts []P
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, invalid("%s: must be a string or a list of content parts: %v", where, err)
	}
	out := make([]Block, 0, len(parts))
	for k, p := range parts {
		b, e := part(k, p)
		if e != nil {
			return nil, e
		}
		out = append(out, b)
	}
	return out, nil
}

// resultBlock is a tool message or function_call_output as a tool_result
// block. These protocols have no error flag; a result whose text is
// wrapped in <tool_use_error> tags, as llm/openai marks one, is an error
// result (IsError) of the text inside.
func resultBlock(id string, content []Block) Block {
	b := Block{Type: "tool_result", ToolUseID: id, Content: content}
	if len(content) == 1 && content[0].Type == "text" {
		inner, ok := strings.CutPrefix(content[0].Text, "<tool_use_error>")
		if inner, ok2 := strings.CutSuffix(inner, "</tool_use_error>"); ok && ok2 {
			b.IsError, b.Content = true, []Block{{Type: "text", Text: inner}}
		}
	}
	return b
}

// argsInput is a tool call's arguments as tool_use input: the JSON object,
// compacted, or, when the model wrote something else, that text as a JSON
// string.
func argsInput(args string) json.RawMessage {
	in := json.RawMessage(args)
	if !isJSONObject(in) {
		in, _ = json.Marshal(args)
		return in
	}
	var buf bytes.Buffer
	json.Compact(&buf, in)
	return buf.Bytes()
}

// imageBlock is an image given by URL (a data: URL, normally).
func imageBlock(url string) Block {
	src, _ := json.Marshal(map[string]string{"type": "url", "url": url})
	return Block{Type: "image", Source: src}
}
