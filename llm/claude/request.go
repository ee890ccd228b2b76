package claude

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// MaxBreakpoints is the most cache markers the Messages API accepts in one
// request.
const MaxBreakpoints = 4

// minThinkingBudget is the smallest budget_tokens the API accepts.
const minThinkingBudget = 1024

// efforts are the output effort levels the API knows.
var efforts = map[string]bool{"low": true, "medium": true, "high": true, "xhigh": true, "max": true}

// cacheMarker is the cache_control member of a marked block or tool.
const cacheMarker = `,"cache_control":{"type":"ephemeral"}`

// encodeRequest checks req and writes the body of a streaming Messages
// request for it: the JSON the SDK's MessageNewParams would marshal to, with
// "temperature" and "stream" appended as the SDK's option.WithJSONSet
// appends them, members in the SDK's order. The result shares no memory with
// req. cache keeps the encoded stable parts across calls; sizeHint, when
// positive, is the expected body size.
func encodeRequest(req *llm.Request, cache *jsonenc.Cache, sizeHint int) ([]byte, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	maxTokens := int64(req.MaxTokens)
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	if err := checkThinking(req.Thinking, maxTokens); err != nil {
		return nil, err
	}
	dst := make([]byte, 0, max(sizeHint, 1024))
	dst = append(dst, `{"max_tokens":`...)
	dst = strconv.AppendInt(dst, maxTokens, 10)
	var err error
	if len(req.Messages) > 0 {
		dst = append(dst, `,"messages":[`...)
		for i, m := range req.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendMessage(dst, m); err != nil {
				return nil, fmt.Errorf("claude: message %d: %w", i, err)
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"model":`...)
	dst = jsonenc.AppendString(dst, req.Model)
	if req.Effort != "" {
		dst = append(dst, `,"output_config":{"effort":`...)
		dst = append(jsonenc.AppendString(dst, req.Effort), '}')
	}
	if len(req.StopSeqs) > 0 {
		dst = append(dst, `,"stop_sequences":[`...)
		for i, s := range req.StopSeqs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonenc.AppendString(dst, s)
		}
		dst = append(dst, ']')
	}
	if len(req.System) > 0 {
		dst = append(dst, `,"system":[`...)
		for i, b := range req.System {
			if b.Type != llm.BlockText {
				return nil, fmt.Errorf("claude: system block %d has type %q; the system prompt holds text blocks only", i, b.Type)
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"text":`...)
			dst = cache.AppendText(dst, b.Text)
			dst = appendCache(dst, b.Cache)
			dst = append(dst, `,"type":"text"}`...)
		}
		dst = append(dst, ']')
	}
	dst = appendThinking(dst, req.Thinking)
	if len(req.Tools) > 0 {
		dst = append(dst, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendTool(dst, t, cache); err != nil {
				return nil, fmt.Errorf("claude: tool %d (%s): %w", i, t.Name, err)
			}
		}
		dst = append(dst, ']')
	}
	if t := req.Temperature; t != nil {
		dst = append(dst, `,"temperature":`...)
		dst = strconv.AppendFloat(dst, *t, 'f', -1, 64)
	}
	return append(dst, `,"stream":true}`...), nil
}

// checkRequest validates the scalar parts of req.
func checkRequest(req *llm.Request) error {
	if req == nil {
		return fmt.Errorf("claude: nil request")
	}
	if req.Model == "" {
		return fmt.Errorf("claude: request names no model; set Request.Model (for example claude-sonnet-4-5)")
	}
	if n := countMarkers(req); n > MaxBreakpoints {
		return fmt.Errorf("claude: request has %d cache breakpoints; the Messages API accepts at most %d (clear stale markers before setting new ones)", n, MaxBreakpoints)
	}
	if req.MaxTokens < 0 {
		return fmt.Errorf("claude: MaxTokens is %d; it must be positive", req.MaxTokens)
	}
	if req.Effort != "" && !efforts[req.Effort] {
		return fmt.Errorf("claude: effort %q is not one of low, medium, high, xhigh, max", req.Effort)
	}
	if t := req.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 1) {
		return fmt.Errorf("claude: temperature %v is not a number from 0 to 1", *t)
	}
	return nil
}

// countMarkers counts every cache marker in req, those inside tool results
// included (llm.Request.Breakpoints counts only the top level).
func countMarkers(req *llm.Request) int {
	n := req.Breakpoints()
	for _, m := range req.Messages {
		for _, b := range m.Content {
			for _, c := range b.Content {
				if c.Cache {
					n++
				}
			}
		}
	}
	return n
}

func checkThinking(t *llm.Thinking, maxTokens int64) error {
	switch {
	case t == nil, t.BudgetTokens <= 0 && t.Adaptive:
		return nil
	case t.BudgetTokens > 0:
		if t.BudgetTokens < minThinkingBudget || int64(t.BudgetTokens) >= maxTokens {
			return fmt.Errorf("claude: thinking budget %d must be at least %d and below max_tokens (%d)", t.BudgetTokens, minThinkingBudget, maxTokens)
		}
		return nil
	}
	return fmt.Errorf("claude: thinking is set with budget %d and adaptive off; give a budget of at least %d or set Adaptive", t.BudgetTokens, minThinkingBudget)
}

// appendThinking appends the thinking member for a checked t.
func appendThinking(dst []byte, t *llm.Thinking) []byte {
	switch {
	case t == nil:
		return dst
	case t.BudgetTokens > 0:
		dst = append(dst, `,"thinking":{"budget_tokens":`...)
		dst = strconv.AppendInt(dst, int64(t.BudgetTokens), 10)
		return append(dst, `,"type":"enabled"}`...)
	}
	return append(dst, `,"thinking":{"type":"adaptive"}`...)
}

func appendCache(dst []byte, on bool) []byte {
	if on {
		return append(dst, cacheMarker...)
	}
	return dst
}

func appendText(dst []byte, b llm.Block) []byte {
	dst = append(dst, `{"text":`...)
	dst = jsonenc.AppendString(dst, b.Text)
	dst = appendCache(dst, b.Cache)
	return append(dst, `,"type":"text"}`...)
}

func appendTool(dst []byte, t llm.ToolDef, cache *jsonenc.Cache) ([]byte, error) {
	if t.WebSearch != nil {
		return appendWebSearchTool(dst, t)
	}
	if t.Name == "" {
		return dst, fmt.Errorf("tool has no name")
	}
	// The schema goes out as the caller's JSON (compacted), key order and
	// unknown keywords included, never through a map whose order is random.
	schema, err := cache.Schema(t.InputSchema)
	if err != nil {
		return dst, fmt.Errorf("input schema: %w", err)
	}
	dst = append(dst, `{"input_schema":`...)
	dst = append(dst, schema...)
	dst = append(dst, `,"name":`...)
	dst = jsonenc.AppendString(dst, t.Name)
	if t.Defer {
		if t.Cache {
			return dst, fmt.Errorf("tool %s is deferred and cannot carry a cache marker; put it on a tool that is not", t.Name)
		}
		dst = append(dst, `,"defer_loading":true`...)
	}
	if t.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = cache.AppendText(dst, t.Description)
	}
	dst = appendCache(dst, t.Cache)
	return append(dst, '}'), nil
}

func appendMessage(dst []byte, m llm.Message) ([]byte, error) {
	if len(m.Content) == 0 {
		return dst, fmt.Errorf("%s message has no content blocks", m.Role)
	}
	if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
		return dst, fmt.Errorf("role %q is neither user nor assistant", m.Role)
	}
	dst = append(dst, `{"content":[`...)
	for i, b := range m.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendBlock(dst, b); err != nil {
			return dst, fmt.Errorf("block %d (%s): %w", i, b.Type, err)
		}
	}
	dst = append(dst, `],"role":`...)
	dst = jsonenc.AppendString(dst, string(m.Role))
	return append(dst, '}'), nil
}

func appendBlock(dst []byte, b llm.Block) ([]byte, error) {
	switch b.Type {
	case llm.BlockText:
		return appendText(dst, b), nil
	case llm.BlockImage:
		return appendImage(dst, b)
	case llm.BlockToolUse, llm.BlockServerToolUse:
		return appendToolUse(dst, b)
	case llm.BlockToolResult:
		return appendToolResult(dst, b)
	case llm.BlockWebSearchResult:
		return appendWebSearchResult(dst, b), nil
	case llm.BlockThinking, llm.BlockRedactedThinking:
		if b.Cache {
			return dst, fmt.Errorf("a cache marker cannot sit on a %s block; put it on the next text or tool block", b.Type)
		}
		if b.Type == llm.BlockRedactedThinking {
			dst = append(dst, `{"data":`...)
			dst = jsonenc.AppendString(dst, b.Data)
			return append(dst, `,"type":"redacted_thinking"}`...), nil
		}
		dst = append(dst, `{"signature":`...)
		dst = jsonenc.AppendString(dst, b.Signature)
		dst = append(dst, `,"thinking":`...)
		dst = jsonenc.AppendString(dst, b.Thinking)
		return append(dst, `,"type":"thinking"}`...), nil
	}
	return dst, fmt.Errorf("unknown block type %q", b.Type)
}

// appendToolUse appends a tool_use or server_tool_use block: the same
// members, in the same order.
func appendToolUse(dst []byte, b llm.Block) ([]byte, error) {
	input, err := jsonenc.CompactObject(b.Input, `{}`)
	if err != nil {
		return dst, fmt.Errorf("%s %s input: %w", b.Type, b.ID, err)
	}
	dst = append(dst, `{"id":`...)
	dst = jsonenc.AppendString(dst, b.ID)
	dst = append(dst, `,"input":`...)
	dst = append(dst, input...)
	dst = append(dst, `,"name":`...)
	dst = jsonenc.AppendString(dst, b.Name)
	dst = appendCache(dst, b.Cache)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, b.Type...)
	return append(dst, `"}`...), nil
}

func appendImage(dst []byte, b llm.Block) ([]byte, error) {
	if b.Data == "" || b.MediaType == "" {
		return dst, fmt.Errorf("image needs base64 Data and a MediaType")
	}
	dst = append(dst, `{"source":{"data":`...)
	dst = jsonenc.AppendString(dst, b.Data)
	dst = append(dst, `,"media_type":`...)
	dst = jsonenc.AppendString(dst, b.MediaType)
	dst = append(dst, `,"type":"base64"}`...)
	dst = appendCache(dst, b.Cache)
	return append(dst, `,"type":"image"}`...), nil
}

func appendToolResult(dst []byte, b llm.Block) ([]byte, error) {
	if b.ToolUseID == "" {
		return dst, fmt.Errorf("tool_result has no tool_use_id")
	}
	dst = append(dst, `{"tool_use_id":`...)
	dst = jsonenc.AppendString(dst, b.ToolUseID)
	if b.IsError {
		dst = append(dst, `,"is_error":true`...)
	}
	dst = appendCache(dst, b.Cache)
	items := 0
	for i, c := range b.Content {
		switch c.Type {
		case llm.BlockText:
			// The API refuses empty text blocks; an empty result is no content.
			if c.Text == "" && !c.Cache {
				continue
			}
		case llm.BlockImage, llm.BlockToolReference:
		default:
			return dst, fmt.Errorf("tool_result content %d has type %q; only text, image and tool_reference are allowed", i, c.Type)
		}
		if items == 0 {
			dst = append(dst, `,"content":[`...)
		} else {
			dst = append(dst, ',')
		}
		items++
		if c.Type == llm.BlockText {
			dst = appendText(dst, c)
			continue
		}
		if c.Type == llm.BlockToolReference {
			if c.Name == "" {
				return dst, fmt.Errorf("tool_result content %d: tool_reference names no tool", i)
			}
			dst = append(dst, `{"tool_name":`...)
			dst = jsonenc.AppendString(dst, c.Name)
			dst = appendCache(dst, c.Cache)
			dst = append(dst, `,"type":"tool_reference"}`...)
			continue
		}
		var err error
		if dst, err = appendImage(dst, c); err != nil {
			return dst, fmt.Errorf("tool_result content %d: %w", i, err)
		}
	}
	if items > 0 {
		dst = append(dst, ']')
	}
	return append(dst, `,"type":"tool_result"}`...), nil
}
