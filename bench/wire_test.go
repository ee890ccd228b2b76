package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
)

// BenchmarkRequestJSON isolates the request-serialization share of a turn:
// the same 50 KB-history request (the one BenchmarkQueryLoopTurn sends)
// marshalled through the SDK's parameter types, as llm/claude did before it
// wrote request bodies itself, and through plain encoding/json structs of
// the wire shape. It is kept as the record of why llm/claude hands the SDK
// its own bytes; llm/claude's BenchmarkRequestBody measures that writer
// against the SDK path on a request of the same shape.
func BenchmarkRequestJSON(b *testing.B) {
	req := fixtureRequest(b)
	b.Run("sdk-params", func(b *testing.B) {
		p := sdkParams(req)
		loop(b, func() {
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("wire-structs", func(b *testing.B) {
		loop(b, func() {
			if _, err := json.Marshal(wireOf(req)); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// fixtureRequest returns the request of one fixture turn.
func fixtureRequest(b testing.TB) *llm.Request {
	f := newTurnFixture(b)
	replay := f.record(b)
	cfg := f.cfg
	cfg.Model = f.model(b, "http://replay.invalid", replay)
	cfg.History = f.history
	a := engine.New(cfg)
	if _, err := a.Send(b.Context(), []llm.Block{llm.Text("Go on.")}, ""); err != nil {
		b.Fatal(err)
	}
	return a.LastRequest()
}

// sdkParams converts the block types the fixture uses the way llm/claude
// does (text, tool_use, tool_result; schemas as raw JSON).
func sdkParams(req *llm.Request) anthropic.MessageNewParams {
	cc := func(on bool) anthropic.CacheControlEphemeralParam {
		if on {
			return anthropic.NewCacheControlEphemeralParam()
		}
		return anthropic.CacheControlEphemeralParam{}
	}
	p := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	for _, s := range req.System {
		p.System = append(p.System, anthropic.TextBlockParam{Text: s.Text, CacheControl: cc(s.Cache)})
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: t.Name,
			Description: param.NewOpt(t.Description), CacheControl: cc(t.Cache),
			InputSchema: param.Override[anthropic.ToolInputSchemaParam](t.InputSchema)}})
	}
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, bl := range m.Content {
			var u anthropic.ContentBlockParamUnion
			switch bl.Type {
			case llm.BlockText:
				u.OfText = &anthropic.TextBlockParam{Text: bl.Text, CacheControl: cc(bl.Cache)}
			case llm.BlockToolUse:
				u.OfToolUse = &anthropic.ToolUseBlockParam{ID: bl.ID, Name: bl.Name, Input: bl.Input, CacheControl: cc(bl.Cache)}
			case llm.BlockToolResult:
				tr := &anthropic.ToolResultBlockParam{ToolUseID: bl.ToolUseID, CacheControl: cc(bl.Cache)}
				for _, c := range bl.Content {
					tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{
						OfText: &anthropic.TextBlockParam{Text: c.Text, CacheControl: cc(c.Cache)}})
				}
				u.OfToolResult = tr
			}
			blocks = append(blocks, u)
		}
		if m.Role == llm.RoleUser {
			p.Messages = append(p.Messages, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: blocks}})
		} else {
			p.Messages = append(p.Messages, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}})
		}
	}
	return p
}

type wireCache struct {
	Type string `json:"type"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []wireBlock     `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *wireCache      `json:"cache_control,omitempty"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *wireCache      `json:"cache_control,omitempty"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireRequest struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    []wireBlock   `json:"system,omitempty"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Messages  []wireMessage `json:"messages"`
	Stream    bool          `json:"stream"`
}

// wireOf converts req to wire structs; it is part of the measured cost.
func wireOf(req *llm.Request) wireRequest {
	cc := func(on bool) *wireCache {
		if on {
			return &wireCache{Type: "ephemeral"}
		}
		return nil
	}
	var blocks func([]llm.Block) []wireBlock
	blocks = func(bs []llm.Block) []wireBlock {
		out := make([]wireBlock, len(bs))
		for i, bl := range bs {
			out[i] = wireBlock{Type: string(bl.Type), Text: bl.Text, ID: bl.ID, Name: bl.Name, Input: bl.Input,
				ToolUseID: bl.ToolUseID, IsError: bl.IsError, CacheControl: cc(bl.Cache)}
			if len(bl.Content) > 0 {
				out[i].Content = blocks(bl.Content)
			}
		}
		return out
	}
	w := wireRequest{Model: req.Model, MaxTokens: req.MaxTokens, System: blocks(req.System), Stream: true}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, CacheControl: cc(t.Cache)})
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, wireMessage{Role: string(m.Role), Content: blocks(m.Content)})
	}
	return w
}

// BenchmarkResponseSSE isolates the response-parsing share of a turn: the
// recorded stream of the fixture turn (51 events: text and input deltas and
// pings) decoded by the SDK's ssestream into its event union and
// accumulated with Message.Accumulate, as llm/claude did before it decoded
// events itself, and by a plain line scanner with encoding/json into a
// small struct. llm/claude's BenchmarkResponseStream measures its decoder
// (the SDK's framing, its own event struct) against the SDK path.
func BenchmarkResponseSSE(b *testing.B) {
	f := newTurnFixture(b)
	replay := f.record(b)
	b.Run("sdk-stream", func(b *testing.B) {
		loop(b, func() {
			resp := &http.Response{StatusCode: 200, Header: replay.Header, Body: io.NopCloser(bytes.NewReader(replay.Body))}
			stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(resp), nil)
			var msg anthropic.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					b.Fatal(err)
				}
			}
			if stream.Err() != nil || len(msg.Content) != 2 {
				b.Fatalf("decoded %d blocks, err %v", len(msg.Content), stream.Err())
			}
		})
	})
	b.Run("scanner-json", func(b *testing.B) {
		loop(b, func() {
			if n := leanDecode(b, replay.Body); n != 2 {
				b.Fatalf("decoded %d blocks", n)
			}
		})
	})
}

// leanEvent is the part of a stream event a client needs.
type leanEvent struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
}

// leanDecode parses an SSE body and returns the number of blocks.
func leanDecode(b *testing.B, body []byte) int {
	var blocks []strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		var ev leanEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			b.Fatal(err)
		}
		switch {
		case ev.Type == "content_block_start":
			blocks = append(blocks, strings.Builder{})
		case ev.Type == "content_block_delta" && ev.Delta != nil:
			blocks[ev.Index].WriteString(ev.Delta.Text + ev.Delta.PartialJSON)
		}
	}
	return len(blocks)
}
