package fakeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"unicode/utf8"
)

// Wire shapes of the streamed events. Structs (not maps) keep the key order,
// and so the bytes, deterministic.
type (
	wireUsage struct {
		InputTokens              int                `json:"input_tokens"`
		CacheCreationInputTokens int                `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int                `json:"cache_read_input_tokens"`
		CacheCreation            *wireCacheCreation `json:"cache_creation,omitempty"`
		OutputTokens             int                `json:"output_tokens"`
		ServiceTier              string             `json:"service_tier,omitempty"`
	}
	wireCacheCreation struct {
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
	}
	wireMessage struct {
		ID           string    `json:"id"`
		Type         string    `json:"type"`
		Role         string    `json:"role"`
		Model        string    `json:"model"`
		Content      []any     `json:"content"`
		StopReason   *string   `json:"stop_reason"`
		StopSequence *string   `json:"stop_sequence"`
		Usage        wireUsage `json:"usage"`
	}
	evMessageStart struct {
		Type    string      `json:"type"`
		Message wireMessage `json:"message"`
	}
	evBlockStart struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}
	evBlockDelta struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta any    `json:"delta"`
	}
	evBlockStop struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	evMessageDelta struct {
		Type  string       `json:"type"`
		Delta wireStop     `json:"delta"`
		Usage wireEndUsage `json:"usage"`
	}
	wireStop struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	}
	wireEndUsage struct {
		InputTokens              int `json:"input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		OutputTokens             int `json:"output_tokens"`
	}
	evType struct {
		Type string `json:"type"`
	}
	wireErrorBody struct {
		Type  string     `json:"type"`
		Error wireErrObj `json:"error"`
		// RequestID is omitted inside streams, as the API does.
		RequestID string `json:"request_id,omitempty"`
	}
	wireErrObj struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}

	wireText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	wireToolUse struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	wireThinking struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	wireRedacted struct {
		Type string `json:"type"`
		Data string `json:"data"`
	}
	wireJSONDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
	wireThinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	wireSignatureDelta struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
	}
)

// event is one SSE event before encoding.
type event struct {
	name    string
	payload any
}

// blockEvents returns the start, delta and stop events of content block i.
// Text, thinking and tool input are split by fragments.
func blockEvents(i int, b Block, rng *rand.Rand) []event {
	var evs []event
	delta := func(d any) {
		evs = append(evs, event{"content_block_delta", evBlockDelta{"content_block_delta", i, d}})
	}
	start := func(cb any) {
		evs = append(evs, event{"content_block_start", evBlockStart{"content_block_start", i, cb}})
	}
	switch b.Type {
	case "text":
		start(wireText{"text", ""})
		for _, f := range fragments(b.Text, rng, 16) {
			delta(wireText{"text_delta", f})
		}
	case "tool_use":
		start(wireToolUse{"tool_use", b.ID, b.Name, json.RawMessage("{}")})
		for _, f := range fragments(string(b.Input), rng, 8) {
			delta(wireJSONDelta{"input_json_delta", f})
		}
	case "thinking":
		start(wireThinking{"thinking", "", ""})
		for _, f := range fragments(b.Thinking, rng, 16) {
			delta(wireThinkingDelta{"thinking_delta", f})
		}
		delta(wireSignatureDelta{"signature_delta", b.Signature})
	case "redacted_thinking":
		start(wireRedacted{"redacted_thinking", b.Data})
	case "server_tool_use":
		start(wireToolUse{"server_tool_use", b.ID, b.Name, json.RawMessage("{}")})
		for _, f := range fragments(string(b.Input), rng, 8) {
			delta(wireJSONDelta{"input_json_delta", f})
		}
	case "web_search_tool_result":
		start(searchResultWire(b)) // the API sends it whole, with no deltas
	}
	return append(evs, event{"content_block_stop", evBlockStop{"content_block_stop", i}})
}

// fullBlock returns the block as a complete (non-streamed) message holds it.
func fullBlock(b Block) any {
	switch b.Type {
	case "tool_use":
		return wireToolUse{"tool_use", b.ID, b.Name, b.Input}
	case "thinking":
		return wireThinking{"thinking", b.Thinking, b.Signature}
	case "redacted_thinking":
		return wireRedacted{"redacted_thinking", b.Data}
	case "server_tool_use":
		return wireToolUse{"server_tool_use", b.ID, b.Name, b.Input}
	case "web_search_tool_result":
		return searchResultWire(b)
	}
	return wireText{"text", b.Text}
}

// fragments splits s into non-empty pieces of 1..maxBytes bytes chosen by
// rng. A cut never falls inside a UTF-8 sequence — each piece travels as a
// JSON string, which cannot hold half a character — but it does fall
// anywhere else, including inside \uXXXX escapes, between the two halves of
// an escaped surrogate pair, and between a backslash and what it escapes.
// A piece is extended to the next character boundary when needed, so a piece
// may exceed maxBytes by up to 3 bytes.
func fragments(s string, rng *rand.Rand, maxBytes int) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + rng.IntN(maxBytes)
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// sseWriter encodes events as "event: NAME\ndata: JSON\n\n". It does not
// flush: the events of a zero-latency reply all exist at once, so they go
// out as the response buffer fills and when the reply ends, in as few
// writes as a real server under load would use, not one write per event
// (which cost the fake and the client a syscall and a wake-up each).
type sseWriter struct {
	w   io.Writer
	buf bytes.Buffer
	enc *json.Encoder // writes into buf, HTML left unescaped as the API does
}

func (s *sseWriter) write(ev event) error {
	if s.enc == nil {
		s.enc = json.NewEncoder(&s.buf)
		s.enc.SetEscapeHTML(false)
	}
	s.buf.Reset()
	s.buf.WriteString("event: ")
	s.buf.WriteString(ev.name)
	s.buf.WriteString("\ndata: ")
	if err := s.enc.Encode(ev.payload); err != nil { // ends the line
		return err
	}
	s.buf.WriteByte('\n')
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// pingEvent is the keep-alive the API sends between events.
var pingEvent = event{"ping", evType{"ping"}}

// withPings returns evs with pings inserted: one after the first
// content_block_start, as the API does, and others at seeded random places
// after message_start and before message_stop.
func withPings(evs []event, rng *rand.Rand) []event {
	out := make([]event, 0, len(evs)+len(evs)/6+2)
	first := true
	for i, ev := range evs {
		out = append(out, ev)
		if i == len(evs)-1 {
			break
		}
		if ev.name == "content_block_start" && first {
			first = false
			out = append(out, pingEvent)
			continue
		}
		if rng.IntN(8) == 0 {
			out = append(out, pingEvent)
		}
	}
	return out
}
