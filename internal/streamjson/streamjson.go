// Package streamjson writes the JSON of Claude Code's stream-json lines,
// which package cohort's Event encodes to: objects whose keys keep their
// order, the API's server-sent event shapes for partial messages, and the
// null and [] Claude Code writes for what is absent.
package streamjson

import (
	"encoding/json"

	"github.com/cohort-dev/cohort/llm"
)

// StreamEvent renders a raw stream event in the API's SSE data shape
// (message_start, content_block_start, content_block_delta, …).
func StreamEvent(ev *llm.Event) any {
	if ev == nil {
		return nil
	}
	m := map[string]any{}
	switch ev.Type {
	case llm.EventStart:
		m["type"] = "message_start"
		m["message"] = map[string]any{"type": "message", "role": "assistant", "content": []llm.Block{}, "usage": ev.Usage}
	case llm.EventBlockStart:
		m["type"], m["index"], m["content_block"] = "content_block_start", ev.Index, ev.Block
	case llm.EventDelta:
		m["type"], m["index"] = "content_block_delta", ev.Index
		m["delta"] = map[string]any{"type": string(ev.DeltaKind), deltaField(ev.DeltaKind): ev.Delta}
	case llm.EventBlockStop:
		m["type"], m["index"] = "content_block_stop", ev.Index
	case llm.EventDone:
		m["type"] = "message_stop"
	default:
		m["type"] = string(ev.Type)
	}
	return m
}

func deltaField(k llm.DeltaKind) string {
	switch k {
	case llm.DeltaInputJSON:
		return "partial_json"
	case llm.DeltaThinking:
		return "thinking"
	case llm.DeltaSignature:
		return "signature"
	}
	return "text"
}

// NonNil is s, or an empty list (written as []) for nil.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Nullable is s, or nil (written as null) when it is empty.
func Nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Object is a JSON object that keeps its keys in the order they were
// added, as Claude Code writes its lines.
type Object []field

type field struct {
	k string
	v any
}

// Add appends the key k with the value v.
func (o *Object) Add(k string, v any) { *o = append(*o, field{k, v}) }

// Opt appends k only when v is not empty.
func (o *Object) Opt(k, v string) {
	if v != "" {
		o.Add(k, v)
	}
}

// MarshalJSON writes the keys in order.
func (o Object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
