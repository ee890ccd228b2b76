package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/lazyre"

	"go.yaml.in/yaml/v3"
)

// Script is a parsed script: rules tried in order against each request. It
// is immutable and safe for concurrent use.
type Script struct {
	name  string
	rules []rule
}

// ScriptError is a problem in a script file, with the line it is on.
type ScriptError struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *ScriptError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// rule is one scripted turn.
type rule struct {
	label string
	match match
	times int // 0: unlimited
	reply Reply
}

// match holds a rule's conditions; all set ones must hold.
type match struct {
	system, firstUser, lastUser, toolResult, model, tool string
	api                                                  API

	systemRE, firstUserRE, lastUserRE, toolResultRE *regexp.Regexp

	turn, attempt *int
}

// LoadScript reads and parses a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fakeapi: read script: %w", err)
	}
	return ParseScript(path, data)
}

// Name returns the name the script was parsed under (its file path).
func (sc *Script) Name() string { return sc.name }

// Len returns the number of rules.
func (sc *Script) Len() int { return len(sc.rules) }

var yamlLine = lazyre.New(`^yaml: line (\d+): (.*)$`)

// ParseScript parses a script in YAML (or JSON, which YAML accepts). name is
// used in error messages, which say file:line and what to change.
func ParseScript(name string, data []byte) (*Script, error) {
	p := &parser{file: name}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, p.errf(line, "invalid YAML: %s", m[2])
		}
		return nil, p.errf(0, "invalid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, p.errf(0, "the script is empty; write a list of rules, each with a match and a reply")
	}
	root := doc.Content[0]
	if root.Kind == yaml.MappingNode {
		var err error
		if root, err = p.rulesKey(root); err != nil {
			return nil, err
		}
	}
	if root.Kind != yaml.SequenceNode {
		return nil, p.errf(root.Line, "the script must be a list of rules (or a mapping with a \"rules\" list)")
	}
	if len(root.Content) == 0 {
		return nil, p.errf(root.Line, "the script has no rules")
	}
	sc := &Script{name: name}
	for i, n := range root.Content {
		r, err := p.rule(n, i+1)
		if err != nil {
			return nil, err
		}
		sc.rules = append(sc.rules, r)
	}
	return sc, nil
}

// parser carries the file name and a budget that bounds alias expansion.
type parser struct {
	file   string
	budget int
	// offset is added to YAML line numbers (text cut from a larger file);
	// literal takes strings as they are, without placeholders.
	offset  int
	literal bool
}

func (p *parser) errf(line int, format string, args ...any) error {
	if line > 0 {
		line += p.offset
	}
	return &ScriptError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) rulesKey(root *yaml.Node) (*yaml.Node, error) {
	var rules *yaml.Node
	err := p.fields(root, "script", func(key string, v *yaml.Node) error {
		if key != "rules" {
			return p.errf(v.Line, "unknown top-level key %q; the only one is \"rules\"", key)
		}
		rules = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	if rules == nil {
		return nil, p.errf(root.Line, "the script mapping has no \"rules\" list")
	}
	return resolve(rules), nil
}

// fields walks a mapping node, calling f for each key and value.
func (p *parser) fields(n *yaml.Node, what string, f func(key string, v *yaml.Node) error) error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return p.errf(n.Line, "%s must be a mapping of key: value", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return p.errf(k.Line, "%s: keys must be plain words", what)
		}
		if seen[k.Value] {
			return p.errf(k.Line, "%s: key %q appears twice", what, k.Value)
		}
		seen[k.Value] = true
		if err := f(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

var ruleKeys = "name, match, times, reply, stop_reason, fault, first_token_delay, output_tokens, quirks"

func (p *parser) rule(n *yaml.Node, index int) (rule, error) {
	r := rule{label: fmt.Sprintf("rule %d (line %d)", index, n.Line)}
	hasReply := false
	what := fmt.Sprintf("rule %d", index)
	err := p.fields(n, what, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			var name string
			if name, err = p.str(v, what+" name"); err == nil {
				r.label = name
			}
		case "match":
			r.match, err = p.match(v, what)
		case "times":
			r.times, err = p.positive(v, what+" times")
		case "reply":
			hasReply = true
			r.reply.Content, err = p.blocks(v, what)
		case "stop_reason":
			r.reply.StopReason, err = p.str(v, what+" stop_reason")
		case "fault":
			hasReply = true
			r.reply.Fault, err = p.fault(v, what)
		case "first_token_delay":
			r.reply.FirstTokenDelay, err = p.duration(v, what+" first_token_delay")
		case "output_tokens":
			r.reply.OutputTokens, err = p.positive(v, what+" output_tokens")
		case "quirks":
			r.reply.Quirks, err = p.quirks(v, what+" quirks")
		default:
			err = p.errf(v.Line, "%s: unknown key %q (known: %s)", what, key, ruleKeys)
		}
		return err
	})
	if err != nil {
		return r, err
	}
	if !hasReply {
		return r, p.errf(n.Line, "%s has neither a reply nor a fault; add `reply: [...]`", what)
	}
	r.reply.Label = r.label
	return r, nil
}

var matchKeys = "system, system_re, first_user, first_user_re, last_user, last_user_re, tool_result, tool_result_re, turn, attempt, model, tool, api"

func (p *parser) match(n *yaml.Node, rule string) (match, error) {
	var m match
	what := rule + " match"
	err := p.fields(n, what, func(key string, v *yaml.Node) error {
		var err error
		field := what + " " + key
		switch key {
		case "system":
			m.system, err = p.str(v, field)
		case "first_user":
			m.firstUser, err = p.str(v, field)
		case "last_user":
			m.lastUser, err = p.str(v, field)
		case "tool_result":
			m.toolResult, err = p.str(v, field)
		case "model":
			m.model, err = p.str(v, field)
		case "tool":
			m.tool, err = p.str(v, field)
		case "api":
			var a string
			if a, err = p.str(v, field); err == nil {
				m.api = API(a)
				if m.api != APIMessages && m.api != APIChat && m.api != APIResponses {
					err = p.errf(v.Line, "%s must be messages, chat or responses (got %q)", field, a)
				}
			}
		case "system_re":
			m.systemRE, err = p.regexp(v, field)
		case "first_user_re":
			m.firstUserRE, err = p.regexp(v, field)
		case "last_user_re":
			m.lastUserRE, err = p.regexp(v, field)
		case "tool_result_re":
			m.toolResultRE, err = p.regexp(v, field)
		case "turn", "attempt":
			var x int
			if x, err = p.integer(v, field); err == nil && x < 0 {
				err = p.errf(v.Line, "%s must be 0 or more", field)
			}
			if key == "turn" {
				m.turn = &x
			} else {
				m.attempt = &x
			}
		default:
			err = p.errf(v.Line, "%s: unknown condition %q (known: %s)", what, key, matchKeys)
		}
		return err
	})
	return m, err
}

func (p *parser) str(v *yaml.Node, what string) (string, error) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		return "", p.errf(v.Line, "%s must be a string", what)
	}
	return v.Value, nil
}

func (p *parser) integer(v *yaml.Node, what string) (int, error) {
	var x int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&x) != nil {
		return 0, p.errf(v.Line, "%s must be a whole number (got %q)", what, v.Value)
	}
	return x, nil
}

func (p *parser) positive(v *yaml.Node, what string) (int, error) {
	x, err := p.integer(v, what)
	if err == nil && x < 1 {
		err = p.errf(v.Line, "%s must be 1 or more", what)
	}
	return x, err
}

func (p *parser) duration(v *yaml.Node, what string) (time.Duration, error) {
	s, err := p.str(v, what)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, p.errf(v.Line, "%s must be a duration such as 250ms or 2s (got %q)", what, s)
	}
	return d, nil
}

func (p *parser) regexp(v *yaml.Node, what string) (*regexp.Regexp, error) {
	s, err := p.str(v, what)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, p.errf(v.Line, "%s is not a valid regular expression: %v", what, err)
	}
	return re, nil
}

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
