package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The Responses API request as the fake reads it, translated into the
// provider-neutral Request as chat completions are (chatwire.go):
// instructions and leading system or developer messages become the system
// prompt; input items become messages, where the reasoning, assistant
// message and function_call items that follow one another make one
// assistant message (a reasoning item a thinking block whose Signature is
// its encrypted_content, a function_call a tool_use block), and
// function_call_output items make tool_result blocks of one user message,
// together with the user message that follows them.

// respWire is the body of POST /v1/responses.
type respWire struct {
	Model           *string         `json:"model"`
	Instructions    string          `json:"instructions"`
	Input           json.RawMessage `json:"input"`
	Tools           []respTool      `json:"tools"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type respItem struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ID               string          `json:"id"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	Summary          []respPart      `json:"summary"`
	EncryptedContent string          `json:"encrypted_content"`
}

type respPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

// decodeResponses decodes and validates a Responses API body.
func decodeResponses(body []byte) (*Request, *apiError) {
	var w respWire
	if err := json.Unmarshal(body, &w); err != nil {
		if !json.Valid(body) {
			return nil, invalid("We could not parse the JSON body of your request. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.")
		}
		return nil, invalid("request body: %v", err)
	}
	if w.Model == nil || *w.Model == "" {
		return nil, invalid("Missing required parameter: 'model'.")
	}
	req := &Request{API: APIResponses, Model: *w.Model, Stream: w.Stream, autoCache: true}
	if w.MaxOutputTokens != nil {
		if *w.MaxOutputTokens < 16 {
			return nil, invalid("Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got %d instead.", *w.MaxOutputTokens)
		}
		req.MaxTokens = *w.MaxOutputTokens
	}
	if w.Instructions != "" {
		req.System = []Block{{Type: "text", Text: w.Instructions}}
	}
	for i, t := range w.Tools {
		if t.Type != "function" {
			return nil, invalid("tools[%d].type: only \"function\" tools are supported by the fake (got %q)", i, t.Type)
		}
		if !openAIToolName.MatchString(t.Name) {
			return nil, invalid("Invalid 'tools[%d].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$' (got %q).", i, t.Name)
		}
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		raw, _ := json.Marshal(t)
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, InputSchema: schema, raw: raw, schema: schemaTypeOf(schema)})
	}
	if e := respInput(req, w.Input); e != nil {
		return nil, e
	}
	if e := validate(req); e != nil {
		return nil, e
	}
	return req, nil
}

// respInput translates the input into req.System and req.Messages.
func respInput(req *Request, raw json.RawMessage) *apiError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return invalid("Missing required parameter: 'input'.")
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		req.Messages = []Message{{Role: "user", Content: []Block{{Type: "text", Text: s}}}}
		return nil
	}
	var items []respItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return invalid("input: must be a string or a list of input items: %v", err)
	}
	c := &convo{req: req}
	for i, it := range items {
		if e := c.item(it, fmt.Sprintf("input[%d]", i)); e != nil {
			return e
		}
	}
	c.flush()
	return nil
}

// item adds one input item.
func (c *convo) item(it respItem, where string) *apiError {
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message"
	}
	switch typ {
	case "message":
		blocks, e := respContent(it.Content, where)
		if e != nil {
			return e
		}
		switch it.Role {
		case "system", "developer":
			return c.system(blocks, it.Role, where)
		case "user":
			c.user(blocks)
		case "assistant":
			a := c.assistant()
			a.Content = append(a.Content, blocks...)
		default:
			return invalid("Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'. (%s.role)", it.Role, where)
		}
	case "reasoning":
		var parts []string
		for _, p := range it.Summary {
			parts = append(parts, p.Text)
		}
		a := c.assistant()
		a.Content = append(a.Content, Block{Type: "thinking", Thinking: strings.Join(parts, "\n\n"), Signature: it.EncryptedContent})
	case "function_call":
		if it.CallID == "" || it.Name == "" {
			return invalid("%s: a function_call needs a call_id and a name", where)
		}
		a := c.assistant()
		a.Content = append(a.Content, Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: argsInput(it.Arguments)})
	case "function_call_output":
		if it.CallID == "" {
			return invalid("Missing required parameter: '%s.call_id'.", where)
		}
		blocks, e := respContent(it.Output, where+".output")
		if e != nil {
			return e
		}
		c.result(it.CallID, blocks)
	default:
		return invalid("%s.type: the fake reads message, reasoning, function_call and function_call_output items (got %q)", where, it.Type)
	}
	return nil
}

// respContent decodes a message's content (a string or parts) or a
// function_call_output's output.
func respContent(raw json.RawMessage, where string) ([]Block, *apiError) {
	return contentBlocks(raw, where, func(k int, p respPart) (Block, *apiError) {
		switch p.Type {
		case "input_text", "output_text":
			return Block{Type: "text", Text: p.Text}, nil
		case "input_image":
			return imageBlock(p.ImageURL), nil
		}
		return Block{}, invalid("Invalid value: '%s'. Supported values are: 'input_text', 'input_image' and 'output_text'. (%s[%d].type)", p.Type, where, k)
	})
}
