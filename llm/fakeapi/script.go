package fakeapi

import (
	"fmt"
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
