package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// apiError is an error response: HTTP status, the API's error type, message.
type apiError struct {
	status  int
	typ     string
	message string
	// code is the OpenAI protocols' error code ("" sends null).
	code string
}

func invalid(format string, args ...any) *apiError {
	return &apiError{status: 400, typ: "invalid_request_error", message: fmt.Sprintf(format, args...)}
}

// maxBreakpoints is the API's limit on blocks carrying cache_control.
const maxBreakpoints = 4

var toolNamePattern = lazyre.New(`^[a-zA-Z0-9_-]{1,128}$`)

// validToolName is toolNamePattern.MatchString without the regexp engine:
// every request's tools are checked.
func validToolName(name string) bool {
	if len(name) < 1 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// decodeRequest decodes and validates a /v1/messages body. countOnly relaxes
// the rules that only apply to generation (max_tokens), for count_tokens.
// Messages and tools come from mm when their exact bytes were decoded
// before (mm may be nil).
func decodeRequest(body []byte, countOnly bool, mm *memo) (*Request, *apiError) {
	return decodeWith(body, countOnly, mm, splitBody)
}

// decodeWith is decodeRequest with the body's first reading done by split
// (a test compares splitBody with json.Unmarshal through it). Whatever else
// is wrong, a body that is not valid JSON is reported as such, as the API
// (and json.Unmarshal, which checks the whole body first) does; splitBody
// leaves the insides of messages to their own decoding, so the body is
// checked again on the error path.
func decodeWith(body []byte, countOnly bool, mm *memo, split func([]byte, *wireRequest) error) (*Request, *apiError) {
	req, e := decodeParts(body, countOnly, mm, split)
	if e != nil && !json.Valid(body) {
		return nil, notJSON()
	}
	return req, e
}

func decodeParts(body []byte, countOnly bool, mm *memo, split func([]byte, *wireRequest) error) (*Request, *apiError) {
	var w wireRequest
	if err := split(body, &w); err != nil {
		return nil, invalid("request body: %v", err)
	}
	req := &Request{API: APIMessages, Thinking: w.Thinking, Stream: w.Stream, CacheControl: w.CacheControl}
	if w.Tools != nil {
		req.Tools = make([]Tool, len(w.Tools))
	}
	for i, raw := range w.Tools {
		t, err := mm.tool(raw)
		if err != nil {
			return nil, invalid("tools.%d: %v", i, err)
		}
		req.Tools[i] = t
	}
	if w.Model == nil || *w.Model == "" {
		return nil, invalid("model: Field required")
	}
	req.Model = *w.Model
	if !countOnly {
		if w.MaxTokens == nil {
			return nil, invalid("max_tokens: Field required")
		}
		if *w.MaxTokens < 1 {
			return nil, invalid("max_tokens: Input should be greater than or equal to 1")
		}
		req.MaxTokens = *w.MaxTokens
	}
	if w.Messages == nil {
		return nil, invalid("messages: Field required")
	}
	req.Messages = make([]Message, len(*w.Messages))
	for i, raw := range *w.Messages {
		m, err := mm.message(raw)
		if err != nil {
			return nil, invalid("messages.%d: %v", i, err)
		}
		req.Messages[i] = m
	}
	system, err := mm.systemBlocks(w.System)
	if err != nil {
		return nil, invalid("system: %v", err)
	}
	req.System = system
	if e := validate(req); e != nil {
		return nil, e
	}
	return req, nil
}

func notJSON() *apiError {
	return invalid("request body is not valid JSON; send a JSON object with model, max_tokens and messages")
}

// validate applies the API's structural rules to a decoded request.
func validate(req *Request) *apiError {
	for i, b := range req.System {
		if b.Type != "text" {
			return invalid("system.%d.type: Input should be 'text'", i)
		}
	}
	if e := validateTools(req.Tools); e != nil {
		return e
	}
	if e := validateMessages(req.Messages, req.API == APIChat || req.API == APIResponses); e != nil {
		return e
	}
	if e := validateToolPairs(req.Messages); e != nil {
		return e
	}
	if e := validateReferences(req); e != nil {
		return e
	}
	if e := validateCacheControl(req); e != nil {
		return e
	}
	return validateThinking(req)
}

func validateTools(tools []Tool) *apiError {
	seen := make(map[string]bool, len(tools))
	deferred := 0
	for i, t := range tools {
		if t.DeferLoading {
			deferred++
			if present(t.CacheControl) {
				return invalid("tools.%d: a tool with defer_loading cannot set cache_control; put the breakpoint on a tool that is loaded", i)
			}
		}
		if !validToolName(t.Name) {
			return invalid("tools.%d.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$' (got %q)", i, t.Name)
		}
		if seen[t.Name] {
			return invalid("tools: Tool names must be unique. %q appears more than once.", t.Name)
		}
		seen[t.Name] = true
		if t.Type != "" && t.Type != "custom" {
			continue // a server tool: its own schema, not checked here
		}
		if len(t.InputSchema) == 0 {
			return invalid("tools.%d.input_schema: Field required", i)
		}
		if t.schemaType() != "object" {
			return invalid("tools.%d.input_schema: must be a JSON schema object with \"type\": \"object\"", i)
		}
	}
	if deferred > 0 && deferred == len(tools) {
		return invalid("tools: every tool has defer_loading; at least one must be loaded (the one that searches the others)")
	}
	return nil
}

// validateReferences checks that every tool_reference names a tool of the
// request that has defer_loading.
func validateReferences(req *Request) *apiError {
	for i, m := range req.Messages {
		for j, b := range m.Content {
			for k, c := range b.Content {
				if b.Type != "tool_result" || c.Type != "tool_reference" {
					continue
				}
				t := req.tool(c.ToolName)
				switch {
				case t == nil:
					return invalid("messages.%d.content.%d.content.%d: tool reference %q names no tool in tools", i, j, k, c.ToolName)
				case !t.DeferLoading:
					return invalid("messages.%d.content.%d.content.%d: tool reference %q names a tool without defer_loading", i, j, k, c.ToolName)
				}
			}
		}
	}
	return nil
}

// userOnly and assistantOnly name the block types that belong to one role.
var (
	userOnly      = map[string]bool{"tool_result": true, "image": true, "document": true}
	assistantOnly = map[string]bool{"tool_use": true, "thinking": true, "redacted_thinking": true,
		"server_tool_use": true, "web_search_tool_result": true}
)

// validateMessages checks roles and block placement. Consecutive messages of
// the same role are rejected (the real API merges them; the fake is stricter
// so that a client bug that produces them shows up in tests).
// textArgs applies the OpenAI protocols' rules: tool_use input that is not
// an object (a tool call's arguments are text the model wrote) and an
// assistant turn with empty content are accepted.
func validateMessages(msgs []Message, textArgs bool) *apiError {
	if len(msgs) == 0 {
		return invalid("messages: at least one message is required")
	}
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			return invalid("messages.%d.role: Input should be 'user' or 'assistant' (got %q)", i, m.Role)
		}
		if i == 0 && m.Role != "user" {
			return invalid("messages: first message must use the \"user\" role")
		}
		if i > 0 && msgs[i-1].Role == m.Role {
			return invalid("messages: roles must alternate between \"user\" and \"assistant\", but found multiple %q roles in a row (messages.%d and messages.%d)", m.Role, i-1, i)
		}
		if len(m.Content) == 0 && !(i == len(msgs)-1 && m.Role == "assistant") {
			return invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		for j, b := range m.Content {
			if e := validateBlock(b, m.Role, fmt.Sprintf("messages.%d.content.%d", i, j), textArgs); e != nil {
				return e
			}
		}
	}
	return nil
}

func validateBlock(b Block, role, where string, textArgs bool) *apiError {
	switch {
	case b.Type == "":
		return invalid("%s.type: Field required", where)
	case role == "assistant" && userOnly[b.Type]:
		return invalid("%s: %s blocks can only be in user messages", where, b.Type)
	case role == "user" && assistantOnly[b.Type]:
		return invalid("%s: %s blocks can only be in assistant messages", where, b.Type)
	case b.Type == "text" && b.Text == "" && !(textArgs && role == "assistant"):
		return invalid("messages: text content blocks must be non-empty (%s)", where)
	case b.Type == "tool_use" && (b.ID == "" || b.Name == ""):
		return invalid("%s: tool_use blocks need an id and a name", where)
	case b.Type == "tool_use" && !textArgs && !isJSONObject(b.Input):
		return invalid("%s.input: Input should be a valid dictionary", where)
	case b.Type == "tool_result" && b.ToolUseID == "":
		return invalid("%s.tool_use_id: Field required", where)
	}
	if b.Type != "tool_result" {
		return nil
	}
	for k, c := range b.Content {
		if c.Type == "tool_reference" && !textArgs {
			if c.ToolName == "" {
				return invalid("%s.content.%d.tool_name: Field required", where, k)
			}
			continue
		}
		if c.Type != "text" && c.Type != "image" && c.Type != "document" && c.Type != "search_result" {
			return invalid("%s.content.%d.type: tool_result content must be text, image, document or search_result blocks (got %q)", where, k, c.Type)
		}
		if c.Type == "text" && c.Text == "" {
			return invalid("messages: text content blocks must be non-empty (%s.content.%d)", where, k)
		}
	}
	return nil
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// validateToolPairs checks that every tool_result answers a tool_use of the
// immediately preceding assistant message, and that every tool_use of an
// assistant message followed by another message is answered in it.
func validateToolPairs(msgs []Message) *apiError {
	for i, m := range msgs {
		switch m.Role {
		case "user":
			asked := map[string]bool{}
			if i > 0 {
				for _, b := range msgs[i-1].Content {
					if b.Type == "tool_use" {
						asked[b.ID] = true
					}
				}
			}
			answered := map[string]bool{}
			for _, b := range m.Content {
				if b.Type != "tool_result" {
					continue
				}
				if !asked[b.ToolUseID] {
					return invalid("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, b.ToolUseID)
				}
				if answered[b.ToolUseID] {
					return invalid("messages.%d.content: `tool_use_id` %s has more than one `tool_result` block", i, b.ToolUseID)
				}
				answered[b.ToolUseID] = true
			}
		case "assistant":
			if e := checkAnswered(msgs, i); e != nil {
				return e
			}
		}
	}
	return nil
}

func checkAnswered(msgs []Message, i int) *apiError {
	ids := map[string]bool{}
	var order []string
	for _, b := range msgs[i].Content {
		if b.Type != "tool_use" {
			continue
		}
		if ids[b.ID] {
			return invalid("messages.%d.content: `tool_use` ids must be unique; %s appears more than once", i, b.ID)
		}
		ids[b.ID] = true
		order = append(order, b.ID)
	}
	if i+1 >= len(msgs) || len(order) == 0 {
		return nil
	}
	for _, b := range msgs[i+1].Content {
		if b.Type == "tool_result" {
			delete(ids, b.ToolUseID)
		}
	}
	var missing []string
	for _, id := range order {
		if ids[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", "))
	}
	return nil
}

// cacheControl is the decoded cache_control object.
type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl"`
}

func parseCacheControl(raw json.RawMessage, where string) (cacheControl, *apiError) {
	var cc cacheControl
	if err := json.Unmarshal(raw, &cc); err != nil {
		return cc, invalid("%s.cache_control: %v", where, err)
	}
	if cc.Type != "ephemeral" {
		return cc, invalid("%s.cache_control.type: Input should be 'ephemeral'", where)
	}
	if cc.TTL != "" && cc.TTL != "5m" && cc.TTL != "1h" {
		return cc, invalid("%s.cache_control.ttl: Input should be '5m' or '1h'", where)
	}
	return cc, nil
}

// validateCacheControl checks every marker and their count.
func validateCacheControl(req *Request) *apiError {
	n := 0
	check := func(raw json.RawMessage, where string) *apiError {
		if !present(raw) {
			return nil
		}
		n++
		_, e := parseCacheControl(raw, where)
		return e
	}
	if e := check(req.CacheControl, "request"); e != nil {
		return e
	}
	for i, t := range req.Tools {
		if e := check(t.CacheControl, fmt.Sprintf("tools.%d", i)); e != nil {
			return e
		}
	}
	for i, b := range req.System {
		if e := check(b.CacheControl, fmt.Sprintf("system.%d", i)); e != nil {
			return e
		}
	}
	for i, m := range req.Messages {
		for j, b := range m.Content {
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			if e := check(b.CacheControl, where); e != nil {
				return e
			}
			for k, c := range b.Content {
				if e := check(c.CacheControl, fmt.Sprintf("%s.content.%d", where, k)); e != nil {
					return e
				}
			}
		}
	}
	if n > maxBreakpoints {
		return invalid("A maximum of %d blocks with cache_control may be provided. Found %d.", maxBreakpoints, n)
	}
	return nil
}

func present(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null"
}

// validateThinking checks the thinking configuration.
func validateThinking(req *Request) *apiError {
	if !present(req.Thinking) {
		return nil
	}
	var th struct {
		Type         string `json:"type"`
		BudgetTokens *int   `json:"budget_tokens"`
	}
	if err := json.Unmarshal(req.Thinking, &th); err != nil {
		return invalid("thinking: %v", err)
	}
	switch th.Type {
	case "disabled", "adaptive":
		return nil
	case "enabled":
	default:
		return invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive' (got %q)", th.Type)
	}
	if th.BudgetTokens == nil {
		return invalid("thinking.enabled.budget_tokens: Field required")
	}
	if *th.BudgetTokens < 1024 {
		return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
	}
	if req.MaxTokens > 0 && *th.BudgetTokens >= req.MaxTokens {
		return invalid("`max_tokens` must be greater than `thinking.budget_tokens` (max_tokens %d, budget_tokens %d)", req.MaxTokens, *th.BudgetTokens)
	}
	return nil
}
