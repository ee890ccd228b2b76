package claude

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
)

// benchRequest is a request shaped like a working turn: a 10 KB system
// prompt, ten tools, and a history of about 50 KB of reasoning, tool calls
// and source code results (tabs and newlines included, which need escaping).
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 32000,
		System: []llm.Block{{Type: llm.BlockText, Text: strings.Repeat("You are a careful engineer. Read before you write; test what you change.\n", 140), Cache: true}}}
	for i := range 10 {
		req.Tools = append(req.Tools, llm.ToolDef{Name: fmt.Sprintf("Tool%d", i),
			Description: strings.Repeat("Does one thing well and says what went wrong. ", 8),
			InputSchema: json.RawMessage(`{"type": "object", "properties": {"file_path": {"type": "string", "description": "Absolute path"}, "limit": {"type": "integer"}}, "required": ["file_path"], "additionalProperties": false}`)})
	}
	req.Tools[9].Cache = true
	req.Messages = append(req.Messages, llm.UserText("The cache tests fail intermittently; find out why."))
	var src strings.Builder
	for line := range 60 {
		fmt.Fprintf(&src, "%6d\tfunc (s *Store) Get%d(key string) (Value, bool) { return s.items[key], true }\n", line, line)
	}
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("toolu_%02d", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Text(fmt.Sprintf("Next I will read part %d to see how it handles concurrent access.", i)),
				llm.ToolUse(id, "Tool0", json.RawMessage(fmt.Sprintf(`{"file_path":"/work/store/part%d.go"}`, i))),
			}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(id, src.String(), false)}})
	}
	last := &req.Messages[len(req.Messages)-1].Content[0]
	last.Cache = true
	return req
}

// BenchmarkRequestBody compares the body this package writes with the SDK's
// marshalling of the same request (the way it was sent before).
func BenchmarkRequestBody(b *testing.B) {
	req := benchRequest()
	b.Run("ours", func(b *testing.B) {
		var cache jsonenc.Cache
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			body, err := encodeRequest(req, &cache, n)
			if err != nil {
				b.Fatal(err)
			}
			n = len(body)
		}
		b.SetBytes(int64(n))
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			p, _, err := sdkParams(req)
			if err != nil {
				b.Fatal(err)
			}
			body, err := json.Marshal(p)
			if err != nil {
				b.Fatal(err)
			}
			n = len(body)
		}
		b.SetBytes(int64(n))
	})
}

// benchStream is a response of a working turn: a 330-byte sentence in
// 30 text deltas and a tool call in 15 input deltas, with pings.
func benchStream() string {
	var s strings.Builder
	s.WriteString(sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":17000}}}`))
	s.WriteString(sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
	for i := range 30 {
		s.WriteString(sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": fmt.Sprintf("word%02d and a few more ", i)}}))
		if i%10 == 0 {
			s.WriteString(sse("ping", `{"type": "ping"}`))
		}
	}
	s.WriteString(sse("content_block_stop", `{"type":"content_block_stop","index":0}`))
	s.WriteString(sse("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`))
	input := `{"file_path":"/work/project/internal/store/cache.go","offset":120,"limit":400}`
	for i := 0; i < len(input); i += 6 {
		s.WriteString(sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": input[i:min(i+6, len(input))]}}))
	}
	s.WriteString(sse("content_block_stop", `{"type":"content_block_stop","index":1}`))
	s.WriteString(sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":95}}`))
	s.WriteString(sse("message_stop", `{"type":"message_stop"}`))
	return s.String()
}

// BenchmarkResponseStream compares this package's event decoding and
// accumulation with the SDK's event union and Message.Accumulate, both on
// the SDK's SSE framing.
func BenchmarkResponseStream(b *testing.B) {
	body := benchStream()
	res := func() *http.Response {
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(body))}
	}
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stream := ssestream.NewStream[wireEvent](ssestream.NewDecoder(res()), nil)
			var tr translator
			for stream.Next() {
				ev := stream.Current()
				if _, _, err := tr.apply(&ev); err != nil {
					b.Fatal(err)
				}
			}
			resp, err := tr.response("")
			if err != nil || !tr.done || len(resp.Content) != 2 {
				b.Fatalf("done %v, %v", tr.done, err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res()), nil)
			var msg anthropic.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					b.Fatal(err)
				}
			}
			if stream.Err() != nil || len(msg.Content) != 2 {
				b.Fatalf("%d blocks, %v", len(msg.Content), stream.Err())
			}
		}
	})
}
