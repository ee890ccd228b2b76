package fakeapi

// The reply half of a script's parser: faults, quirks and content blocks,
// with tool inputs written as YAML and turned into JSON.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

func (p *parser) fault(n *yaml.Node, rule string) (*Fault, error) {
	f := &Fault{}
	what := rule + " fault"
	err := p.fields(n, what, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "kind":
			var k string
			if k, err = p.str(v, what+" kind"); err == nil {
				f.Kind = FaultKind(k)
				if _, ok := faultKinds[f.Kind]; !ok {
					err = p.errf(v.Line, "%s kind %q is unknown (known: %s)", what, k, knownFaults())
				}
			}
		case "retry_after":
			f.RetryAfter, err = p.str(v, what+" retry_after")
		case "retry_after_ms":
			f.RetryAfterMs, err = p.str(v, what+" retry_after_ms")
		case "message":
			f.Message, err = p.str(v, what+" message")
		case "type":
			f.Type, err = p.str(v, what+" type")
		case "status":
			if f.Status, err = p.integer(v, what+" status"); err == nil && (f.Status < 400 || f.Status > 599) {
				err = p.errf(v.Line, "%s status must be an HTTP error status (400-599)", what)
			}
		case "after_blocks":
			if f.AfterBlocks, err = p.integer(v, what+" after_blocks"); err == nil && f.AfterBlocks < 0 {
				err = p.errf(v.Line, "%s after_blocks must not be negative", what)
			}
		default:
			err = p.errf(v.Line, "%s: unknown key %q (known: kind, retry_after, retry_after_ms, message, type, status, after_blocks)", what, key)
		}
		return err
	})
	if err == nil && f.Kind == "" {
		err = p.errf(n.Line, "%s needs a kind (one of %s)", what, knownFaults())
	}
	return f, err
}

// quirks parses a list of quirk names.
func (p *parser) quirks(n *yaml.Node, what string) ([]Quirk, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n.Line, "%s must be a list of quirk names (known: %s)", what, quirkNames())
	}
	var out []Quirk
	for _, item := range n.Content {
		s, err := p.str(resolve(item), what)
		if err != nil {
			return nil, err
		}
		if !knownQuirk(Quirk(s)) {
			return nil, p.errf(item.Line, "%s: unknown quirk %q (known: %s)", what, s, quirkNames())
		}
		out = append(out, Quirk(s))
	}
	return out, nil
}

func knownFaults() string {
	return "rate_limited, overloaded, server_error, bad_request, unauthorized, permission_denied, billing, spend_limit, stream_error, cut_connection, stall, keepalive, html_error, error_body"
}

// blocks parses a reply: a string (one text block) or a list of blocks.
func (p *parser) blocks(n *yaml.Node, rule string) ([]Block, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		s, err := p.str(n, rule+" reply")
		if err == nil {
			err = p.checkTemplate(s, n.Line)
		}
		return []Block{TextBlock(s)}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n.Line, "%s reply must be a text or a list of blocks (- text: ..., - tool_use: {name: ..., input: {...}}, - thinking: ..., - web_search: {query: ..., results: [...]})", rule)
	}
	var out []Block
	for i, item := range n.Content {
		what := fmt.Sprintf("%s reply block %d", rule, i+1)
		if ws := webSearchNode(item); ws != nil {
			bs, err := p.webSearch(ws, what)
			if err != nil {
				return nil, err
			}
			out = append(out, bs...)
			continue
		}
		b, err := p.block(item, what)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// webSearchNode returns the value of a "- web_search: {…}" reply block (a
// mapping with that one key), or nil.
func webSearchNode(n *yaml.Node) *yaml.Node {
	n = resolve(n)
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 && resolve(n.Content[0]).Value == "web_search" {
		return n.Content[1]
	}
	return nil
}

func (p *parser) block(n *yaml.Node, what string) (Block, error) {
	var b Block
	kinds := 0
	err := p.fields(n, what, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "text", "thinking", "redacted_thinking":
			kinds++
			var s string
			if s, err = p.str(v, what+" "+key); err == nil {
				err = p.checkTemplate(s, v.Line)
			}
			b.Type = key
			switch key {
			case "text":
				b.Text = s
			case "thinking":
				b.Thinking = s
			default:
				b.Data = s
			}
		case "signature":
			b.Signature, err = p.str(v, what+" signature")
		case "tool_use":
			kinds++
			b, err = p.toolUse(v, what, b.Signature)
		default:
			err = p.errf(v.Line, "%s: unknown key %q (a block is one of text, tool_use, thinking, redacted_thinking)", what, key)
		}
		return err
	})
	if err == nil && kinds != 1 {
		err = p.errf(n.Line, "%s must have exactly one of text, tool_use, thinking, redacted_thinking", what)
	}
	if err == nil && b.Signature != "" && b.Type != "thinking" {
		err = p.errf(n.Line, "%s: signature belongs to a thinking block", what)
	}
	return b, err
}

func (p *parser) toolUse(n *yaml.Node, what, signature string) (Block, error) {
	b := Block{Type: "tool_use", Input: json.RawMessage("{}"), Signature: signature}
	err := p.fields(n, what+" tool_use", func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			b.Name, err = p.str(v, what+" tool_use name")
			if err == nil && !toolNamePattern.MatchString(b.Name) {
				err = p.errf(v.Line, "%s tool_use name %q must match ^[a-zA-Z0-9_-]{1,128}$", what, b.Name)
			}
		case "id":
			b.ID, err = p.str(v, what+" tool_use id")
		case "input":
			if resolve(v).Kind != yaml.MappingNode {
				return p.errf(v.Line, "%s tool_use input must be a mapping (a JSON object)", what)
			}
			var buf bytes.Buffer
			p.budget = 0
			if err = p.toJSON(v, &buf); err == nil {
				b.Input = buf.Bytes()
			}
		default:
			err = p.errf(v.Line, "%s tool_use: unknown key %q (known: name, id, input)", what, key)
		}
		return err
	})
	if err == nil && b.Name == "" {
		err = p.errf(n.Line, "%s tool_use needs a name", what)
	}
	return b, err
}

// maxInputNodes and maxInputDepth bound the JSON a tool_use input expands
// to, so that YAML aliases cannot multiply a small file into a huge reply or
// refer to themselves.
const (
	maxInputNodes = 10_000
	maxInputDepth = 64
)

// toJSON writes n as JSON, keeping mapping order, and checks templates in
// strings.
func (p *parser) toJSON(n *yaml.Node, buf *bytes.Buffer) error {
	return p.toJSONDepth(n, buf, 0)
}

func (p *parser) toJSONDepth(n *yaml.Node, buf *bytes.Buffer, depth int) error {
	if p.budget++; p.budget > maxInputNodes {
		return p.errf(n.Line, "tool_use input is too large (more than %d values after expanding aliases)", maxInputNodes)
	}
	if depth > maxInputDepth {
		return p.errf(n.Line, "tool_use input nests deeper than %d levels (an alias that refers to itself?)", maxInputDepth)
	}
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				return p.errf(k.Line, "tool_use input keys must be strings")
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := marshalNoEscape(k.Value)
			buf.Write(key)
			buf.WriteByte(':')
			if err := p.toJSONDepth(n.Content[i+1], buf, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := p.toJSONDepth(c, buf, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return p.scalarJSON(n, buf)
	default:
		return p.errf(n.Line, "tool_use input holds an unsupported YAML node")
	}
	return nil
}

func (p *parser) scalarJSON(n *yaml.Node, buf *bytes.Buffer) error {
	var v any
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
		return nil
	case "!!bool", "!!int":
		if err := n.Decode(&v); err != nil {
			return p.errf(n.Line, "tool_use input: %v", err)
		}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return p.errf(n.Line, "tool_use input: %q is not a finite number", n.Value)
		}
		v = f
	default:
		if err := p.checkTemplate(n.Value, n.Line); err != nil {
			return err
		}
		v = n.Value
	}
	out, err := marshalNoEscape(v)
	if err != nil {
		return p.errf(n.Line, "tool_use input: %v", err)
	}
	buf.Write(out)
	return nil
}

// checkTemplate rejects placeholders the template language does not know.
func (p *parser) checkTemplate(s string, line int) error {
	if p.literal {
		return nil
	}
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		if _, ok := placeholders[m[1]]; !ok {
			return p.errf(line, "unknown placeholder {{%s}} (known: %s)", m[1], placeholderNames())
		}
	}
	return nil
}
