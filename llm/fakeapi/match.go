package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Policy returns a policy that answers from the script: the first rule whose
// conditions all hold and whose `times` is not used up wins. Each call
// returns a policy with fresh `times` counters; the counters are shared by
// all requests to that policy and safe for concurrent use.
//
// A request no rule matches gets a 400 invalid_request_error whose message
// says so, with the facts the rules match on, so a script author sees at
// once which turn is missing.
func (sc *Script) Policy() Policy {
	used := make([]atomic.Int64, len(sc.rules))
	return func(req *Request) Reply {
		for i := range sc.rules {
			r := &sc.rules[i]
			if !r.match.matches(req) {
				continue
			}
			if r.times > 0 && used[i].Add(1) > int64(r.times) {
				continue
			}
			return r.render(req)
		}
		return Reply{Fault: &Fault{Kind: BadRequest, Message: sc.unmatched(req)}}
	}
}

func (sc *Script) unmatched(req *Request) string {
	return fmt.Sprintf("fakeapi: no rule in script %s matched this request (model %q, turn %d, attempt %d, first user message %s, last user message %s); add a rule whose match covers it",
		sc.name, req.Model, req.Turn(), req.Attempt, quoted(req.FirstUserText()), quoted(req.LastUserText()))
}

func quoted(s string) string { return strconv.Quote(clip.Runes(s, 120)) }

func (m *match) matches(req *Request) bool {
	if m.model != "" && !strings.Contains(req.Model, m.model) {
		return false
	}
	if m.api != "" && req.API != m.api {
		return false
	}
	if m.tool != "" && !req.HasTool(m.tool) {
		return false
	}
	if m.turn != nil && req.Turn() != *m.turn {
		return false
	}
	if m.attempt != nil && req.Attempt != *m.attempt {
		return false
	}
	return textMatches(m.system, m.systemRE, req.SystemText) &&
		textMatches(m.firstUser, m.firstUserRE, req.FirstUserText) &&
		textMatches(m.lastUser, m.lastUserRE, req.LastUserText) &&
		textMatches(m.toolResult, m.toolResultRE, req.LastToolResultText)
}

// textMatches checks a substring and a regexp condition against a lazily computed
// text.
func textMatches(sub string, re *regexp.Regexp, get func() string) bool {
	if sub == "" && re == nil {
		return true
	}
	s := get()
	return strings.Contains(s, sub) && (re == nil || re.MatchString(s))
}

// render returns the rule's reply with placeholders filled in from req.
func (r *rule) render(req *Request) Reply {
	out := r.reply
	out.Content = make([]Block, len(r.reply.Content))
	for i, b := range r.reply.Content {
		b.Text = expand(b.Text, req)
		b.Thinking = expand(b.Thinking, req)
		if b.Type == "tool_use" || b.Type == "server_tool_use" {
			b.Input = expandJSON(b.Input, req)
		}
		out.Content[i] = b
	}
	if r.reply.Fault != nil {
		f := *r.reply.Fault
		out.Fault = &f
	}
	return out
}

// placeholder matches {{name}} with optional spaces inside the braces.
var placeholder = lazyre.New(`\{\{\s*([A-Za-z_]+)\s*\}\}`)

// placeholders are the template's names and what each one becomes.
var placeholders = map[string]func(*Request) string{
	"first_user":       (*Request).FirstUserText,
	"last_user":        (*Request).LastUserText,
	"last_tool_result": (*Request).LastToolResultText,
	"system":           (*Request).SystemText,
	"turn":             func(r *Request) string { return strconv.Itoa(r.Turn()) },
	"attempt":          func(r *Request) string { return strconv.Itoa(r.Attempt) },
	"model":            func(r *Request) string { return r.Model },
}

func placeholderNames() string {
	names := make([]string, 0, len(placeholders))
	for k := range placeholders {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// expand fills the placeholders in s. Unknown names were rejected at parse
// time; if one slips through (a Go-built rule), it stays as written.
func expand(s string, req *Request) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		if f, ok := placeholders[name]; ok {
			return f(req)
		}
		return m
	})
}

// expandJSON fills placeholders inside the string literals of compact JSON,
// re-encoding each changed string so the result stays valid JSON whatever
// the substituted text holds.
func expandJSON(raw json.RawMessage, req *Request) json.RawMessage {
	if !bytes.Contains(raw, []byte("{{")) {
		return raw
	}
	var out bytes.Buffer
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out.WriteByte(raw[i])
			i++
			continue
		}
		end := i + 1
		for end < len(raw) && raw[end] != '"' {
			if raw[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end+1, len(raw))
		lit := raw[i:end]
		var s string
		if bytes.Contains(lit, []byte("{{")) && json.Unmarshal(lit, &s) == nil {
			if enc, err := marshalNoEscape(expand(s, req)); err == nil {
				lit = enc
			}
		}
		out.Write(lit)
		i = end
	}
	return out.Bytes()
}
