package claude

// The request translation through the SDK's parameter types that this
// package used before it wrote request bodies itself. It stays as the
// oracle of request_encode_test.go: encodeRequest must produce exactly the
// bytes the SDK sends for these parameters.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/cohort-dev/cohort/llm"
)

// efforts are the output effort levels the API knows.
var sdkEfforts = map[string]anthropic.OutputConfigEffort{
	"low":    anthropic.OutputConfigEffortLow,
	"medium": anthropic.OutputConfigEffortMedium,
	"high":   anthropic.OutputConfigEffortHigh,
	"xhigh":  anthropic.OutputConfigEffortXhigh,
	"max":    anthropic.OutputConfigEffortMax,
}

// sdkParams translates req into fresh SDK parameters plus the per-call
// options that carry what the parameters cannot (temperature). Nothing in
// the result shares memory with req.
func sdkParams(req *llm.Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	var p anthropic.MessageNewParams
	if req == nil {
		return p, nil, fmt.Errorf("claude: nil request")
	}
	if req.Model == "" {
		return p, nil, fmt.Errorf("claude: request names no model; set Request.Model (for example claude-sonnet-4-5)")
	}
	if n := countMarkers(req); n > MaxBreakpoints {
		return p, nil, fmt.Errorf("claude: request has %d cache breakpoints; the Messages API accepts at most %d (clear stale markers before setting new ones)", n, MaxBreakpoints)
	}
	p.Model = anthropic.Model(req.Model)
	p.MaxTokens = int64(req.MaxTokens)
	if req.MaxTokens < 0 {
		return p, nil, fmt.Errorf("claude: MaxTokens is %d; it must be positive", req.MaxTokens)
	}
	if req.MaxTokens == 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	for i, b := range req.System {
		if b.Type != llm.BlockText {
			return p, nil, fmt.Errorf("claude: system block %d has type %q; the system prompt holds text blocks only", i, b.Type)
		}
		p.System = append(p.System, sdkText(b))
	}
	for i, t := range req.Tools {
		tp, err := sdkTool(t)
		if err != nil {
			return p, nil, fmt.Errorf("claude: tool %d (%s): %w", i, t.Name, err)
		}
		p.Tools = append(p.Tools, tp)
	}
	for i, m := range req.Messages {
		mp, err := sdkMessage(m)
		if err != nil {
			return p, nil, fmt.Errorf("claude: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	if err := sdkThinking(&p, req.Thinking); err != nil {
		return p, nil, err
	}
	if req.Effort != "" {
		e, ok := sdkEfforts[req.Effort]
		if !ok {
			return p, nil, fmt.Errorf("claude: effort %q is not one of low, medium, high, xhigh, max", req.Effort)
		}
		p.OutputConfig.Effort = e
	}
	if len(req.StopSeqs) > 0 {
		p.StopSequences = append([]string(nil), req.StopSeqs...)
	}
	var opts []option.RequestOption
	if t := req.Temperature; t != nil {
		if math.IsNaN(*t) || *t < 0 || *t > 1 {
			return p, nil, fmt.Errorf("claude: temperature %v is not a number from 0 to 1", *t)
		}
		opts = append(opts, option.WithJSONSet("temperature", *t))
	}
	return p, opts, nil
}

func sdkThinking(p *anthropic.MessageNewParams, t *llm.Thinking) error {
	switch {
	case t == nil:
	case t.BudgetTokens > 0:
		if t.BudgetTokens < minThinkingBudget || int64(t.BudgetTokens) >= p.MaxTokens {
			return fmt.Errorf("claude: thinking budget %d must be at least %d and below max_tokens (%d)", t.BudgetTokens, minThinkingBudget, p.MaxTokens)
		}
		p.Thinking.OfEnabled = &anthropic.ThinkingConfigEnabledParam{BudgetTokens: int64(t.BudgetTokens)}
	case t.Adaptive:
		p.Thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{}
	default:
		return fmt.Errorf("claude: thinking is set with budget %d and adaptive off; give a budget of at least %d or set Adaptive", t.BudgetTokens, minThinkingBudget)
	}
	return nil
}

func sdkCache(on bool) anthropic.CacheControlEphemeralParam {
	if on {
		return anthropic.NewCacheControlEphemeralParam()
	}
	return anthropic.CacheControlEphemeralParam{}
}

func sdkText(b llm.Block) anthropic.TextBlockParam {
	return anthropic.TextBlockParam{Text: b.Text, CacheControl: sdkCache(b.Cache)}
}

// rawObject returns a private, compacted copy of raw, or fallback when raw
// is empty. Compacting is what encoding/json would do on the wire anyway; doing
// it here makes the error for bad JSON ours, with its location.
func sdkRawObject(raw json.RawMessage, fallback string) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(fallback), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if buf.Bytes()[0] != '{' {
		return nil, fmt.Errorf("JSON %.40q is not an object", buf.String())
	}
	return buf.Bytes(), nil
}

func sdkTool(t llm.ToolDef) (anthropic.ToolUnionParam, error) {
	if ws := t.WebSearch; ws != nil {
		if len(ws.AllowedDomains) > 0 && len(ws.BlockedDomains) > 0 {
			return anthropic.ToolUnionParam{}, fmt.Errorf("web search: allowed and blocked domains cannot both be set")
		}
		p := &anthropic.WebSearchTool20250305Param{AllowedDomains: ws.AllowedDomains, BlockedDomains: ws.BlockedDomains,
			CacheControl: sdkCache(t.Cache)}
		if ws.MaxUses > 0 {
			p.MaxUses = param.NewOpt(int64(ws.MaxUses))
		}
		return anthropic.ToolUnionParam{OfWebSearchTool20250305: p}, nil
	}
	if t.Name == "" {
		return anthropic.ToolUnionParam{}, fmt.Errorf("tool has no name")
	}
	schema, err := sdkRawObject(t.InputSchema, `{"type":"object"}`)
	if err != nil {
		return anthropic.ToolUnionParam{}, fmt.Errorf("input schema: %w", err)
	}
	tp := &anthropic.ToolParam{
		Name: t.Name,
		// The schema goes out as the caller's JSON, not through the SDK's
		// Properties/ExtraFields, whose map order is random.
		InputSchema:  param.Override[anthropic.ToolInputSchemaParam](schema),
		CacheControl: sdkCache(t.Cache),
	}
	if t.Defer {
		if t.Cache {
			return anthropic.ToolUnionParam{}, fmt.Errorf("tool %s is deferred and cannot carry a cache marker; put it on a tool that is not", t.Name)
		}
		tp.DeferLoading = param.NewOpt(true)
	}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return anthropic.ToolUnionParam{OfTool: tp}, nil
}

func sdkMessage(m llm.Message) (anthropic.MessageParam, error) {
	if len(m.Content) == 0 {
		return anthropic.MessageParam{}, fmt.Errorf("%s message has no content blocks", m.Role)
	}
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Content))
	for i, b := range m.Content {
		cb, err := sdkContent(b)
		if err != nil {
			return anthropic.MessageParam{}, fmt.Errorf("block %d (%s): %w", i, b.Type, err)
		}
		blocks = append(blocks, cb)
	}
	switch m.Role {
	case llm.RoleUser:
		return anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: blocks}}, nil
	case llm.RoleAssistant:
		return anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}}, nil
	}
	return anthropic.MessageParam{}, fmt.Errorf("role %q is neither user nor assistant", m.Role)
}

func sdkContent(b llm.Block) (anthropic.ContentBlockParamUnion, error) {
	var u anthropic.ContentBlockParamUnion
	switch b.Type {
	case llm.BlockText:
		t := sdkText(b)
		u.OfText = &t
	case llm.BlockImage:
		img, err := sdkImage(b)
		if err != nil {
			return u, err
		}
		u.OfImage = img
	case llm.BlockToolUse:
		input, err := sdkRawObject(b.Input, `{}`)
		if err != nil {
			return u, fmt.Errorf("tool_use %s input: %w", b.ID, err)
		}
		u.OfToolUse = &anthropic.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input, CacheControl: sdkCache(b.Cache)}
	case llm.BlockToolResult:
		tr, err := sdkToolResult(b)
		if err != nil {
			return u, err
		}
		u.OfToolResult = tr
	case llm.BlockServerToolUse:
		input, err := sdkRawObject(b.Input, `{}`)
		if err != nil {
			return u, fmt.Errorf("server_tool_use %s input: %w", b.ID, err)
		}
		u.OfServerToolUse = &anthropic.ServerToolUseBlockParam{ID: b.ID, Name: anthropic.ServerToolUseBlockParamName(b.Name),
			Input: input, CacheControl: sdkCache(b.Cache)}
	case llm.BlockWebSearchResult:
		wr := &anthropic.WebSearchToolResultBlockParam{ToolUseID: b.ToolUseID, CacheControl: sdkCache(b.Cache)}
		if b.ErrorCode != "" {
			wr.Content.OfRequestWebSearchToolResultError = &anthropic.WebSearchToolRequestErrorObjectParam{
				ErrorCode: anthropic.WebSearchToolResultErrorCode(b.ErrorCode)}
		} else {
			hits := []anthropic.WebSearchResultBlockParam{}
			for _, h := range b.Content {
				hp := anthropic.WebSearchResultBlockParam{EncryptedContent: h.Data, Title: h.Title, URL: h.URL}
				if h.PageAge != "" {
					hp.PageAge = param.NewOpt(h.PageAge)
				}
				hits = append(hits, hp)
			}
			wr.Content.OfWebSearchToolResultBlockItem = hits
		}
		u.OfWebSearchToolResult = wr
	case llm.BlockThinking, llm.BlockRedactedThinking:
		if b.Cache {
			return u, fmt.Errorf("a cache marker cannot sit on a %s block; put it on the next text or tool block", b.Type)
		}
		if b.Type == llm.BlockThinking {
			u.OfThinking = &anthropic.ThinkingBlockParam{Thinking: b.Thinking, Signature: b.Signature}
		} else {
			u.OfRedactedThinking = &anthropic.RedactedThinkingBlockParam{Data: b.Data}
		}
	default:
		return u, fmt.Errorf("unknown block type %q", b.Type)
	}
	return u, nil
}

func sdkImage(b llm.Block) (*anthropic.ImageBlockParam, error) {
	if b.Data == "" || b.MediaType == "" {
		return nil, fmt.Errorf("image needs base64 Data and a MediaType")
	}
	src := &anthropic.Base64ImageSourceParam{Data: b.Data, MediaType: anthropic.Base64ImageSourceMediaType(b.MediaType)}
	return &anthropic.ImageBlockParam{
		Source:       anthropic.ImageBlockParamSourceUnion{OfBase64: src},
		CacheControl: sdkCache(b.Cache),
	}, nil
}

func sdkToolResult(b llm.Block) (*anthropic.ToolResultBlockParam, error) {
	tr := &anthropic.ToolResultBlockParam{ToolUseID: b.ToolUseID, CacheControl: sdkCache(b.Cache)}
	if b.ToolUseID == "" {
		return nil, fmt.Errorf("tool_result has no tool_use_id")
	}
	if b.IsError {
		tr.IsError = param.NewOpt(true)
	}
	for i, c := range b.Content {
		switch c.Type {
		case llm.BlockText:
			// The API refuses empty text blocks; an empty result is no content.
			if c.Text == "" && !c.Cache {
				continue
			}
			t := sdkText(c)
			tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &t})
		case llm.BlockImage:
			img, err := sdkImage(c)
			if err != nil {
				return nil, fmt.Errorf("tool_result content %d: %w", i, err)
			}
			tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img})
		case llm.BlockToolReference:
			if c.Name == "" {
				return nil, fmt.Errorf("tool_result content %d: tool_reference names no tool", i)
			}
			tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{
				OfToolReference: &anthropic.ToolReferenceBlockParam{ToolName: c.Name, CacheControl: sdkCache(c.Cache)}})
		default:
			return nil, fmt.Errorf("tool_result content %d has type %q; only text, image and tool_reference are allowed", i, c.Type)
		}
	}
	return tr, nil
}
