package sdkproto

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// inbound is one stdin line: its type decides which fields it carries.
type inbound struct {
	Type string `json:"type"`
	// user
	Message         json.RawMessage `json:"message"`
	UUID            string          `json:"uuid"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	// control_request, control_cancel_request
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	// control_response
	Response *responseBody `json:"response"`
}

// responseBody is a control response's inner object, both ways.
type responseBody struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// userMessage is the message of a user line.
type userMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// promptText is a user message's text: its content string, or its text
// blocks joined. Other blocks (images, documents) are refused by name.
func promptText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", errors.New(`a user line needs "message": {"role": "user", "content": …}`)
	}
	var m userMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("the message is not an object with role and content: %v", err)
	}
	if m.Role != "" && m.Role != "user" {
		return "", fmt.Errorf("the message's role is %q; a user line carries role \"user\"", m.Role)
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "", errors.New("the message's content is empty")
		}
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return "", errors.New("the message's content is neither a string nor an array of content blocks")
	}
	var parts []string
	for i, b := range blocks {
		if b.Type != "text" {
			return "", fmt.Errorf("content block %d is of type %q; Cohort takes text blocks in stream-json input", i, b.Type)
		}
		parts = append(parts, b.Text)
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the message's content has no text")
	}
	return text, nil
}

// request is the part of a control request every subtype has.
type request struct {
	Subtype string `json:"subtype"`
}

// initRequest is initialize's payload.
type initRequest struct {
	Hooks              map[string][]hookMatcher   `json:"hooks"`
	Agents             map[string]json.RawMessage `json:"agents"`
	SystemPrompt       json.RawMessage            `json:"systemPrompt"`
	AppendSystemPrompt string                     `json:"appendSystemPrompt"`
	JSONSchema         json.RawMessage            `json:"jsonSchema"`
	SDKMCPServers      []string                   `json:"sdkMcpServers"`
}

// hookMatcher is one matcher of initialize's hooks.
type hookMatcher struct {
	Matcher         string   `json:"matcher"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	Timeout         float64  `json:"timeout"` // seconds
}

// systemPrompt reads initialize's systemPrompt: a string or an array of
// strings, joined.
func systemPrompt(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []string
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("systemPrompt is neither a string nor an array of strings")
	}
	return strings.Join(parts, "\n\n"), nil
}

// permissionAnswer is a can_use_tool response's payload (the SDK's
// PermissionResult).
type permissionAnswer struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
	Message      string          `json:"message"`
	Interrupt    bool            `json:"interrupt"`
	// Classification says who decided: user_temporary, user_permanent,
	// user_reject, or config (the host by itself, with nobody asked).
	Classification string `json:"decisionClassification"`
}

// classifications are the values decisionClassification may take.
var classifications = []string{"user_temporary", "user_permanent", "user_reject", "config"}

// outbound control request and response lines.
type controlRequest struct {
	Type      string `json:"type"` // control_request
	RequestID string `json:"request_id"`
	Request   any    `json:"request"`
}

type controlResponse struct {
	Type     string `json:"type"` // control_response
	Response any    `json:"response"`
}

type cancelRequest struct {
	Type      string `json:"type"` // control_cancel_request
	RequestID string `json:"request_id"`
}

// protocolError is the line that reports bad input.
type protocolError struct {
	Type      string `json:"type"`    // system
	Subtype   string `json:"subtype"` // protocol_error
	Line      int    `json:"line,omitempty"`
	Error     string `json:"error"`
	SessionID string `json:"session_id"`
	UUID      string `json:"uuid"`
}

// replay is a user message echoed back (--replay-user-messages).
type replay struct {
	Type            string          `json:"type"` // user
	Message         json.RawMessage `json:"message"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid"`
	IsReplay        bool            `json:"isReplay"`
}

// newID is a random UUID, for the lines and requests the server makes up
// (the session's own events carry the session's ids).
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
