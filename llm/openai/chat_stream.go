package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// chatChunk is the part of a chat.completion.chunk this package reads. The
// strings that carry text are kept raw (json.RawMessage), to be decoded by
// fragText: a chunk may end inside a character.
type chatChunk struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"` // null or absent in usage chunks
	Usage   *chatUsage   `json:"usage"`
	// An error, in OpenAI's shape or vLLM's top-level one.
	Error  json.RawMessage `json:"error"`
	Object string          `json:"object"`
}

type chatChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content          json.RawMessage `json:"content"`
		ReasoningContent json.RawMessage `json:"reasoning_content"`
		Reasoning        json.RawMessage `json:"reasoning"`
		Refusal          json.RawMessage `json:"refusal"`
		ToolCalls        []chatToolDelta `json:"tool_calls"`
	} `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type chatToolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// chatUsage is the usage object, with the cached-token fields of the
// servers that report them: OpenAI and vLLM (prompt_tokens_details),
// DeepSeek (prompt_cache_hit_tokens), llama.cpp (timings.cache_n).
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

// block is a content block being accumulated.
type block struct {
	typ      llm.BlockType
	id, name string
	sig      string // a Responses reasoning item's encrypted_content
	frag     fragText
	text     strings.Builder // text, thinking, or tool arguments, decoded
	whole    []byte          // arguments given as a JSON object, not a string
}

// add decodes a delta string into b and returns the event, if any.
func (b *block) add(index int, raw json.RawMessage) (llm.Event, bool) {
	body, ok := stringBody(bytes.TrimSpace(raw))
	if !ok {
		return llm.Event{}, false
	}
	s := b.frag.add(body)
	if s == "" {
		return llm.Event{}, false
	}
	b.text.WriteString(s)
	return llm.Event{Type: llm.EventDelta, Index: index, DeltaKind: deltaKind(b.typ), Delta: s}, true
}

func deltaKind(t llm.BlockType) llm.DeltaKind {
	switch t {
	case llm.BlockThinking:
		return llm.DeltaThinking
	case llm.BlockToolUse:
		return llm.DeltaInputJSON
	}
	return llm.DeltaText
}

// blocks is the accumulated content of one response, shared by both
// protocols' translators.
type blocks struct {
	list []*block
}

// open starts a block and returns its index and start event.
func (bs *blocks) open(b *block) (int, llm.Event) {
	bs.list = append(bs.list, b)
	head := &llm.Block{Type: b.typ, ID: b.id, Name: b.name}
	return len(bs.list) - 1, llm.Event{Type: llm.EventBlockStart, Index: len(bs.list) - 1, Block: head}
}

// close flushes what each block holds back and returns the final deltas
// and the stop events, and the blocks as content.
func (bs *blocks) close() ([]llm.Event, []llm.Block) {
	var evs []llm.Event
	content := make([]llm.Block, 0, len(bs.list))
	for i, b := range bs.list {
		if rest := b.frag.flush(); rest != "" {
			b.text.WriteString(rest)
			evs = append(evs, llm.Event{Type: llm.EventDelta, Index: i, DeltaKind: deltaKind(b.typ), Delta: rest})
		}
		out := llm.Block{Type: b.typ}
		switch b.typ {
		case llm.BlockText:
			out.Text = b.text.String()
		case llm.BlockThinking:
			out.Thinking, out.Signature, out.ID = b.text.String(), b.sig, b.id
		case llm.BlockToolUse:
			out.ID, out.Name, out.Input = b.id, b.name, toolInput(b)
		}
		content = append(content, out)
		stopped := out
		evs = append(evs, llm.Event{Type: llm.EventBlockStop, Index: i, Block: &stopped})
	}
	return evs, content
}

// toolInput is a tool call's arguments as a tool_use input: the JSON object
// the model wrote, byte for byte; {} for none; and, when the model wrote
// something that is not a JSON object, that text as a JSON string, which
// the engine refuses to run (see the package doc).
func toolInput(b *block) json.RawMessage {
	if b.whole != nil {
		return json.RawMessage(b.whole)
	}
	args := strings.TrimSpace(b.text.String())
	switch {
	case args == "":
		return json.RawMessage(`{}`)
	case args[0] == '{' && json.Valid([]byte(args)):
		return json.RawMessage(args)
	}
	s, _ := json.Marshal(b.text.String())
	return s
}

// hasToolUse reports a tool_use block.
func (bs *blocks) hasToolUse() bool {
	for _, b := range bs.list {
		if b.typ == llm.BlockToolUse {
			return true
		}
	}
	return false
}

// chatTranslator reads a chat completions stream. It tolerates what
// compatible servers do differently from OpenAI (see the package doc): a
// tool call whole in one chunk, calls interleaved by index or without
// one, finish_reason "stop" after tool calls or none at all, the usage on
// any chunk or none, the usage chunk with empty or null choices, and text
// cut inside characters. Thinking arrives as reasoning_content or
// reasoning.
type chatTranslator struct {
	started, end bool
	id, model    string
	finish       *string
	usage        *chatUsage
	blocks
	thinking, text int // block indexes, -1 until opened
	calls          map[int]int
	lastCall       int
}

func (t *chatTranslator) apply(_ string, data []byte) ([]llm.Event, error) {
	if bytes.HasPrefix(data, []byte("[DONE]")) {
		t.end = true
		return nil, nil
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, protocolf("a chunk is not JSON (%v): %.120q", err, data)
	}
	if len(bytes.TrimSpace(c.Error)) > 0 && string(bytes.TrimSpace(c.Error)) != "null" || c.Object == "error" {
		e, _ := parseError(data)
		return nil, &streamError{e}
	}
	var evs []llm.Event
	if !t.started {
		t.started, t.thinking, t.text, t.calls = true, -1, -1, map[int]int{}
		evs = append(evs, llm.Event{Type: llm.EventStart})
	}
	if c.ID != "" {
		t.id = c.ID
	}
	if c.Model != "" {
		t.model = c.Model
	}
	if c.Usage != nil {
		t.usage = c.Usage
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only the first choice is asked for
		}
		d := &ch.Delta
		reasoning := d.ReasoningContent
		if len(reasoning) == 0 || string(reasoning) == "null" {
			reasoning = d.Reasoning
		}
		evs = t.addText(evs, &t.thinking, llm.BlockThinking, reasoning)
		evs = t.addText(evs, &t.text, llm.BlockText, d.Content)
		evs = t.addText(evs, &t.text, llm.BlockText, d.Refusal)
		for _, tc := range d.ToolCalls {
			evs = t.addCall(evs, tc)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			t.finish = ch.FinishReason
		}
	}
	return evs, nil
}

// addText extends the block *idx (opening it on the first text) by raw.
func (t *chatTranslator) addText(evs []llm.Event, idx *int, typ llm.BlockType, raw json.RawMessage) []llm.Event {
	body, ok := stringBody(bytes.TrimSpace(raw))
	if !ok || len(body) == 0 {
		return evs
	}
	if *idx < 0 {
		var start llm.Event
		*idx, start = t.open(&block{typ: typ})
		evs = append(evs, start)
	}
	if ev, ok := t.list[*idx].add(*idx, raw); ok {
		evs = append(evs, ev)
	}
	return evs
}

// addCall applies a tool call delta. A call is named by its index; a server
// that sends none names calls by id, or continues the last one.
func (t *chatTranslator) addCall(evs []llm.Event, tc chatToolDelta) []llm.Event {
	bi, known := -1, false
	switch {
	case tc.Index != nil:
		bi, known = t.calls[*tc.Index]
	case tc.ID != "":
		for i, b := range t.list {
			if b.typ == llm.BlockToolUse && b.id == tc.ID {
				bi, known = i, true
			}
		}
	case len(t.calls) > 0:
		bi, known = t.lastCall, true
	}
	if !known {
		b := &block{typ: llm.BlockToolUse, id: tc.ID, name: tc.Function.Name}
		if b.id == "" {
			b.id = newCallID()
		}
		var start llm.Event
		bi, start = t.open(b)
		key := len(t.calls)
		if tc.Index != nil {
			key = *tc.Index
		}
		t.calls[key] = bi
		evs = append(evs, start)
	}
	t.lastCall = bi
	b := t.list[bi]
	if b.name == "" {
		b.name = tc.Function.Name
	}
	args := bytes.TrimSpace(tc.Function.Arguments)
	if len(args) > 0 && args[0] == '{' {
		// Arguments as an object rather than a string of JSON.
		b.whole = append([]byte(nil), args...)
		return append(evs, llm.Event{Type: llm.EventDelta, Index: bi, DeltaKind: llm.DeltaInputJSON, Delta: string(args)})
	}
	if ev, ok := b.add(bi, args); ok {
		evs = append(evs, ev)
	}
	return evs
}

func (t *chatTranslator) finished() bool { return t.finish != nil }
func (t *chatTranslator) done() bool     { return t.end }

func (t *chatTranslator) response(requestID string) ([]llm.Event, *llm.Response, error) {
	if !t.started {
		return nil, nil, protocolf("the stream ended without a chunk")
	}
	evs, content := t.close()
	finish := ""
	if t.finish != nil {
		finish = *t.finish
	}
	resp := &llm.Response{ID: t.id, Model: t.model, Content: content, RequestID: requestID,
		StopReason: chatStop(finish, t.hasToolUse())}
	if u := t.usage; u != nil {
		cached := u.PromptCacheHitTokens
		if u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens > 0 {
			cached = u.PromptTokensDetails.CachedTokens
		}
		cached = min(cached, u.PromptTokens)
		resp.Usage = llm.Usage{InputTokens: u.PromptTokens - cached, CacheReadInputTokens: cached, OutputTokens: u.CompletionTokens}
	}
	return evs, resp, nil
}

// chatStop maps a finish_reason to a stop reason. A response that made
// tool calls stopped for them whatever the server says, unless it ran out
// of tokens.
func chatStop(finish string, toolUse bool) llm.StopReason {
	switch finish {
	case "length":
		return llm.StopMaxTokens
	case "content_filter":
		return llm.StopRefusal
	}
	if toolUse {
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// newCallID names a tool call the server sent without an id.
func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
