package fakeapi

import (
	"fmt"
	"slices"
	"strings"
)

// API names the protocol a request arrived in.
type API string

// The protocols the fake speaks.
const (
	// APIMessages is Anthropic's POST /v1/messages.
	APIMessages API = "messages"
	// APIChat is OpenAI's POST /v1/chat/completions.
	APIChat API = "chat"
	// APIResponses is OpenAI's POST /v1/responses.
	APIResponses API = "responses"
)

// Quirk is a deviation from OpenAI's own streaming that some
// OpenAI-compatible server shows; the fake reproduces it on request
// (Config.Quirks for every response, Reply.Quirks for one) so that clients
// are tested against it. Quirks change only the OpenAI protocols' streams.
type Quirk string

// The quirks the fake can reproduce.
const (
	// WholeToolCalls sends each tool call whole in one chunk: id, name and
	// all of its arguments (Ollama, some gateways).
	WholeToolCalls Quirk = "whole_tool_calls"
	// StopForToolCalls ends a response that made tool calls with
	// finish_reason "stop" instead of "tool_calls" (llama.cpp with some
	// templates, LM Studio).
	StopForToolCalls Quirk = "stop_for_tool_calls"
	// NoFinishReason sends no finish_reason at all; the stream just ends.
	NoFinishReason Quirk = "no_finish_reason"
	// UsageOnFinish puts the usage on the chunk that carries the
	// finish_reason, with no separate usage chunk (llama.cpp).
	UsageOnFinish Quirk = "usage_on_finish"
	// UsageNullChoices sends the final usage chunk with "choices": null
	// instead of [] (older vLLM).
	UsageNullChoices Quirk = "usage_null_choices"
	// NoUsage ignores stream_options.include_usage: no usage is reported.
	NoUsage Quirk = "no_usage"
	// SplitUTF8 cuts text and tool arguments inside UTF-8 sequences, so a
	// chunk's JSON string carries half a character as raw bytes (servers
	// that stream byte-level tokens).
	SplitUTF8 Quirk = "split_utf8"
	// SplitSurrogates escapes non-ASCII characters as \uXXXX and cuts
	// between the two escaped halves of a surrogate pair (servers written in
	// JavaScript slice UTF-16 strings).
	SplitSurrogates Quirk = "split_surrogates"
	// InterleavedToolCalls streams the arguments of parallel tool calls
	// alternately, chunk by chunk, each chunk naming its call by index.
	InterleavedToolCalls Quirk = "interleaved_tool_calls"
	// ReasoningField streams thinking as "reasoning" (Ollama, OpenRouter)
	// instead of "reasoning_content" (vLLM, DeepSeek, llama.cpp).
	ReasoningField Quirk = "reasoning_field"
	// NoDone ends the stream without the data: [DONE] line.
	NoDone Quirk = "no_done"
	// KeepAliveComments puts SSE comment lines (": keep-alive") between
	// chunks.
	KeepAliveComments Quirk = "keepalive_comments"
)

var allQuirks = []Quirk{WholeToolCalls, StopForToolCalls, NoFinishReason, UsageOnFinish, UsageNullChoices,
	NoUsage, SplitUTF8, SplitSurrogates, InterleavedToolCalls, ReasoningField, NoDone, KeepAliveComments}

// Quirks returns every quirk the fake knows.
func Quirks() []Quirk { return slices.Clone(allQuirks) }

func knownQuirk(q Quirk) bool { return slices.Contains(allQuirks, q) }

func quirkNames() string {
	names := make([]string, len(allQuirks))
	for i, q := range allQuirks {
		names[i] = string(q)
	}
	return strings.Join(names, ", ")
}

func checkQuirks(qs []Quirk) error {
	for _, q := range qs {
		if !knownQuirk(q) {
			return fmt.Errorf("unknown quirk %q (known: %s)", q, quirkNames())
		}
	}
	return nil
}

// quirkSet is the quirks in force for one response.
type quirkSet map[Quirk]bool

func newQuirkSet(lists ...[]Quirk) quirkSet {
	s := quirkSet{}
	for _, l := range lists {
		for _, q := range l {
			s[q] = true
		}
	}
	return s
}
