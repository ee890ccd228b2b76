package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Request is a decoded Messages API request plus the facts the fake derives
// from it. A Policy receives it read-only: it must not modify it, because the
// server records the same value.
type Request struct {
	// API is the protocol the request arrived in; the fields below are its
	// content in the Messages API's terms whatever the protocol (see
	// chatwire.go and respwire.go for the OpenAI translations).
	API       API
	Model     string
	MaxTokens int
	System    []Block
	Tools     []Tool
	Messages  []Message
	Thinking  json.RawMessage // the "thinking" object as sent, nil when absent
	Stream    bool
	// CacheControl is the top-level cache_control (automatic caching): a
	// breakpoint on the last block of the last message.
	CacheControl json.RawMessage

	// Raw is the exact body the client sent.
	Raw []byte
	// Attempt is 1 the first time the server sees this exact body, 2 for its
	// first retry, and so on. A policy uses it to fail the first attempts.
	Attempt int
	// Header holds the request's HTTP headers.
	Header http.Header
	// Index is the request's position in arrival order (1-based), counting
	// every request the server received.
	Index int

	ctx context.Context
	// autoCache makes every block a cache breakpoint: the OpenAI protocols
	// cache prefixes on their own, without markers.
	autoCache bool
	// includeUsage is chat's stream_options.include_usage.
	includeUsage bool
}

// tool returns the request's tool named name, nil when it has none.
func (r *Request) tool(name string) *Tool {
	for i := range r.Tools {
		if r.Tools[i].Name == name {
			return &r.Tools[i]
		}
	}
	return nil
}

// Loaded reports whether the model of this request sees the tool name: it
// is in the array and either not deferred or loaded by a tool_reference of
// the conversation. A script checks it before calling a tool, as a model
// can only call what it sees.
func (r *Request) Loaded(name string) bool {
	t := r.tool(name)
	if t == nil || !t.DeferLoading {
		return t != nil
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			for _, c := range b.Content {
				if b.Type == "tool_result" && c.Type == "tool_reference" && c.ToolName == name {
					return true
				}
			}
		}
	}
	return false
}

// Context returns the request's context: it is cancelled when the client goes
// away or the server closes. A policy that blocks must select on it.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// Block is one content block in wire shape. Which fields are meaningful
// depends on Type, exactly as in the Messages API: text; tool_use (ID, Name,
// Input); tool_result (ToolUseID, Content, IsError); thinking (Thinking,
// Signature); redacted_thinking (Data); image and document (Source);
// server_tool_use (ID, Name, Input); web_search_tool_result (ToolUseID,
// Content of web_search_result blocks, or ErrorCode in a reply);
// web_search_result (Title, URL, PageAge, EncryptedContent).
type Block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []Block         `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     string          `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	Source       json.RawMessage `json:"source,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	// ToolName is the deferred tool a tool_reference block (in a
	// tool_result's content) loads.
	ToolName string `json:"tool_name,omitempty"`

	Title            string `json:"title,omitempty"`
	URL              string `json:"url,omitempty"`
	PageAge          string `json:"page_age,omitempty"`
	EncryptedContent string `json:"encrypted_content,omitempty"`
	// ErrorCode makes a web_search_tool_result of a reply a failed search
	// ("max_uses_exceeded", "too_many_requests", …). A request's error
	// object is kept only in the block's raw bytes.
	ErrorCode string `json:"-"`

	// raw is the block exactly as received; the cache simulator hashes it so
	// that fields this type does not model still count.
	raw json.RawMessage
}

// UnmarshalJSON decodes a block, accepting a tool_result's content as either
// a string or an array of blocks, as the API does.
func (b *Block) UnmarshalJSON(data []byte) error {
	type plain Block
	var w struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*b = Block(w.plain)
	content, err := decodeContent(w.Content)
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	b.Content = content
	b.raw = append(json.RawMessage(nil), data...)
	return nil
}

// Message is one conversation turn. On input its content may be a string
// (one text block) or an array of blocks.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// UnmarshalJSON decodes a message, accepting string content.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	content, err := decodeContent(w.Content)
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	m.Role, m.Content = w.Role, content
	return nil
}

// decodeContent decodes a string-or-array content field. A string becomes one
// text block; null, absent or an object stays nil.
func decodeContent(raw json.RawMessage) ([]Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '{' {
		// Some server-tool result blocks carry an object here; the fake
		// keeps it only in the block's raw bytes.
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []Block{textBlock(s)}, nil
	}
	var blocks []Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	if blocks == nil {
		blocks = []Block{}
	}
	return blocks, nil
}

// textBlock is the block a string content stands for.
func textBlock(s string) Block {
	raw, _ := json.Marshal(map[string]string{"type": "text", "text": s})
	return Block{Type: "text", Text: s, raw: raw}
}

// Tool is a tool definition as sent. Type is empty or "custom" for client
// tools; server tools ("web_search_20250305", ...) carry other types.
type Tool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	// DeferLoading keeps the tool out of the prompt (and the bill) until a
	// tool_reference block in a tool_result names it.
	DeferLoading bool `json:"defer_loading,omitempty"`

	raw json.RawMessage
	// schema is the "type" of InputSchema, read once when the tool is
	// decoded (a decoded tool is remembered and checked on every request).
	schema string
}

// UnmarshalJSON decodes a tool and keeps its raw bytes for the cache hash.
func (t *Tool) UnmarshalJSON(data []byte) error {
	type plain Tool
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*t = Tool(p)
	t.raw = append(json.RawMessage(nil), data...)
	t.schema = schemaTypeOf(t.InputSchema)
	return nil
}

// schemaType returns the "type" of the tool's input schema ("" when it has
// none or is not an object).
func (t Tool) schemaType() string {
	if t.raw != nil {
		return t.schema
	}
	return schemaTypeOf(t.InputSchema) // a Tool built in Go
}

func schemaTypeOf(schema json.RawMessage) string {
	var s struct {
		Type string `json:"type"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return ""
	}
	return s.Type
}

// wireRequest is the body as decoded, with pointers where the API tells a
// missing field from a zero one.
type wireRequest struct {
	Model     *string            `json:"model"`
	MaxTokens *int               `json:"max_tokens"`
	System    json.RawMessage    `json:"system"`
	Tools     []json.RawMessage  `json:"tools"`
	Messages  *[]json.RawMessage `json:"messages"`
	Thinking  json.RawMessage    `json:"thinking"`
	Stream    bool               `json:"stream"`

	CacheControl json.RawMessage `json:"cache_control"`
}

// SystemText returns the system prompt's text blocks joined by newlines.
func (r *Request) SystemText() string { return joinText(r.System) }

// Turn returns the number of assistant messages in the conversation so far:
// 0 for the first request of a conversation.
func (r *Request) Turn() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// FirstUserText returns the text of the first user message.
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return joinText(m.Content)
		}
	}
	return ""
}

// lastUser returns the last user message, or nil.
func (r *Request) lastUser() *Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return &r.Messages[i]
		}
	}
	return nil
}

// LastUserText returns the text of the last user message: its text blocks
// and the text of its tool_result blocks, joined by newlines in block order.
func (r *Request) LastUserText() string {
	m := r.lastUser()
	if m == nil {
		return ""
	}
	var parts []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_result":
			parts = append(parts, joinText(b.Content))
		}
	}
	return strings.Join(parts, "\n")
}

// LastToolResultText returns the text of the tool_result blocks in the last
// user message, joined by newlines; "" when it holds none.
func (r *Request) LastToolResultText() string {
	m := r.lastUser()
	if m == nil {
		return ""
	}
	var parts []string
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			parts = append(parts, joinText(b.Content))
		}
	}
	return strings.Join(parts, "\n")
}

// HasTool reports whether the request offers a tool with this name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func joinText(blocks []Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
