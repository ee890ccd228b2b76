package llm

import (
	"encoding/json"
	"strings"
)

// Role is the author of a message.
type Role string

// The roles a conversation alternates between.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType names the kind of a content block. The values are the wire names
// the Messages API uses.
type BlockType string

// Content block kinds.
const (
	BlockText             BlockType = "text"
	BlockImage            BlockType = "image"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
	BlockThinking         BlockType = "thinking"
	BlockRedactedThinking BlockType = "redacted_thinking"
	// BlockServerToolUse is a call of a tool the provider runs itself (the
	// web search): ID, Name and Input as a tool_use, but answered by the
	// provider in the same response, never by a tool_result.
	BlockServerToolUse BlockType = "server_tool_use"
	// BlockWebSearchResult answers a web search server_tool_use
	// (ToolUseID): Content holds its BlockWebSearchHit blocks, or
	// ErrorCode says why the search failed.
	BlockWebSearchResult BlockType = "web_search_tool_result"
	// BlockWebSearchHit is one search result: Title, URL, PageAge, and in
	// Data the provider's encrypted copy of the page, which must be sent
	// back unchanged when the conversation continues.
	BlockWebSearchHit BlockType = "web_search_result"
	// BlockToolReference, inside a tool_result's Content, loads the
	// deferred tool Name (ToolDef.Defer): from that point of the
	// conversation on the model sees its definition and may call it. The
	// tool must be in the request's array, deferred.
	BlockToolReference BlockType = "tool_reference"
)

// Block is one content block. Only the fields that belong to its Type are
// meaningful; the others stay zero. The JSON form is the transcript format.
type Block struct {
	Type BlockType `json:"type"`

	// Text is the text of a text block.
	Text string `json:"text,omitempty"`

	// ID, Name and Input describe a tool_use block. Input is a JSON object.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`

	// ToolUseID, Content and IsError describe a tool_result block. Content
	// holds text and image blocks, or tool_reference blocks (whose Name is
	// the tool they load).
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   []Block `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	// Thinking and Signature describe a thinking block; Data holds the opaque
	// payload of a redacted_thinking block or the base64 bytes of an image.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`

	// MediaType is an image's MIME type ("image/png").
	MediaType string `json:"media_type,omitempty"`

	// Title, URL and PageAge describe a web_search_result block;
	// ErrorCode is set on a web_search_tool_result whose search failed
	// ("max_uses_exceeded", "too_many_requests", …).
	Title     string `json:"title,omitempty"`
	URL       string `json:"url,omitempty"`
	PageAge   string `json:"page_age,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`

	// Cache marks a prompt-cache breakpoint after this block. It is set per
	// request by the request builder and never persisted.
	Cache bool `json:"-"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: BlockText, Text: s} }

// ToolUse returns a tool_use block.
func ToolUse(id, name string, input json.RawMessage) Block {
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: input}
}

// ToolResult returns a tool_result block holding one text block.
func ToolResult(toolUseID, text string, isError bool) Block {
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: []Block{Text(text)}, IsError: isError}
}

// ToolReference returns a tool_reference block loading the deferred tool
// name.
func ToolReference(name string) Block { return Block{Type: BlockToolReference, Name: name} }

// Clone returns a deep copy of b, so that setting a cache marker or editing
// text on the copy never leaks into the original.
func (b Block) Clone() Block {
	if b.Input != nil {
		b.Input = append(json.RawMessage(nil), b.Input...)
	}
	if b.Content != nil {
		c := make([]Block, len(b.Content))
		for i := range b.Content {
			c[i] = b.Content[i].Clone()
		}
		b.Content = c
	}
	return b
}

// Message is one turn of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// UserText returns a user message holding one text block.
func UserText(s string) Message { return Message{Role: RoleUser, Content: []Block{Text(s)}} }

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	c := make([]Block, len(m.Content))
	for i := range m.Content {
		c[i] = m.Content[i].Clone()
	}
	m.Content = c
	return m
}

// TextContent joins the text of m's text blocks with newlines between them.
func (m Message) TextContent() string { return JoinText(m.Content) }

// ToolUses returns m's tool_use blocks in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == BlockToolUse {
			out = append(out, b)
		}
	}
	return out
}

// JoinText joins the text of the text blocks in blocks with newlines.
func JoinText(blocks []Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == BlockText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// CloneMessages returns a deep copy of msgs.
func CloneMessages(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i := range msgs {
		out[i] = msgs[i].Clone()
	}
	return out
}
