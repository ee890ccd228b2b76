package permission

import (
	"fmt"
	"strings"
)

// Rule is one permission rule: a tool name and an optional specifier, as
// written in settings ("Bash(git diff:*)", "Read(./src/**)", "mcp__github").
// A parsed Rule is immutable and safe to share.
type Rule struct {
	// Tool is the canonical tool name ("Agent" for the legacy "Task").
	Tool string
	// Specifier is the text between the parentheses; "" covers every call.
	Specifier string
	Behavior  Behavior
	// Source names where the rule came from: a settings file path,
	// "--allowedTools", "--disallowedTools", "session", ...
	Source    string
	Line, Col int
	// Root is the directory a path specifier starting with one "/" resolves
	// against (the settings file's project directory).
	Root string
	// Invalid holds the original text when this rule stands in for a deny or
	// ask rule that did not parse; it then covers every call of Tool (of
	// every tool when Tool is "*").
	Invalid string
	// ByApproval is set on a rule of a settings file obeyed only because
	// a person approved its content (settings.Source.Approved: it lies
	// where agents write). Such an allow rule skips prompts within the
	// bounds the person's own files and flags set, never past them
	// (approved.go): it is no person's word on a path, so it does not
	// make a call approved (tool.Env.Approved) either.
	ByApproval bool

	dest   Destination // the layer the rule came from, for replace and remove
	bash   *bashPattern
	path   *pathPattern
	domain string
}

// RuleError is an invalid rule: which rule, where and why.
type RuleError struct {
	Rule      string
	Source    string
	Line, Col int
	Msg       string
}

func (e *RuleError) Error() string {
	loc := e.Source
	if loc != "" && e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.Source, e.Line, e.Col)
	}
	msg := fmt.Sprintf("rule %q: %s", e.Rule, e.Msg)
	if loc != "" {
		return loc + ": " + msg
	}
	return msg
}

// ParseRule parses "Tool" or "Tool(specifier)". Errors are *RuleError.
func ParseRule(s string) (*Rule, error) {
	text := strings.TrimSpace(s)
	fail := func(format string, args ...any) (*Rule, error) {
		return nil, &RuleError{Rule: s, Msg: fmt.Sprintf(format, args...)}
	}
	if text == "" {
		return fail("empty rule; write a tool name such as Bash or Read(./src/**)")
	}
	name, spec, hasSpec := text, "", false
	if i := strings.IndexByte(text, '('); i >= 0 {
		if !strings.HasSuffix(text, ")") {
			return fail("missing closing parenthesis")
		}
		name, spec, hasSpec = text[:i], text[i+1:len(text)-1], true
	} else if strings.ContainsRune(text, ')') {
		return fail("closing parenthesis without an opening one")
	}
	if err := checkToolName(name); err != "" {
		return fail("%s", err)
	}
	if name == "Task" {
		name = "Agent" // Claude Code's earlier name for the Agent tool
	}
	r := &Rule{Tool: name}
	if !hasSpec {
		return r, nil
	}
	if strings.TrimSpace(spec) == "" {
		return fail("empty parentheses; write %s alone to cover every call", name)
	}
	if spec == "*" {
		return r, nil // "Tool(*)" is the whole tool
	}
	if strings.HasPrefix(name, "mcp__") {
		return fail("MCP rules take no parentheses; use mcp__server or mcp__server__tool")
	}
	r.Specifier = spec
	var err error
	switch {
	case name == "Bash":
		r.bash, err = compileBash(spec)
	case pathTool(name):
		r.path, err = compilePath(spec)
	case name == "WebFetch":
		r.domain, err = compileDomain(spec)
	case name == "Agent":
		err = checkAgentName(spec)
	}
	if err != nil {
		return fail("%v", err)
	}
	return r, nil
}

func checkToolName(name string) string {
	if name == "" {
		return "missing tool name before the parenthesis"
	}
	for i, c := range name {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.':
			if i == 0 {
				return "a tool name starts with a letter"
			}
		case c == '*' && i == len(name)-1 && strings.Count(name, "__") >= 2 && strings.HasPrefix(name, "mcp__"):
			// mcp__server__prefix* covers the server's tools with that prefix
		default:
			return fmt.Sprintf("invalid character %q in tool name %q", c, name)
		}
	}
	if strings.HasPrefix(name, "mcp__") && len(name) == len("mcp__") {
		return "missing MCP server name after mcp__"
	}
	return ""
}

func checkAgentName(s string) error {
	for i, c := range s {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (i > 0 && (c == '_' || c == '-' || c == '.'))
		if !ok || i >= 64 {
			return fmt.Errorf("agent name %q must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", s)
		}
	}
	return nil
}

func compileDomain(spec string) (string, error) {
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return "", fmt.Errorf("WebFetch rules look like WebFetch(domain:example.com)")
	}
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	host := strings.TrimPrefix(d, "*.")
	if host == "" {
		return "", fmt.Errorf("missing domain after domain:")
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "", fmt.Errorf("invalid character %q in domain %q (a wildcard is only allowed as a leading *.)", c, d)
		}
	}
	return d, nil
}

// String returns the rule as it would be written in settings.
func (r *Rule) String() string {
	if r.Invalid != "" {
		return r.Invalid
	}
	if r.Specifier == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Specifier + ")"
}

// where names the rule and its source for messages.
func (r *Rule) where() string {
	if r.Source == "" {
		return r.String()
	}
	if r.Line > 0 {
		return fmt.Sprintf("%s (%s:%d)", r.String(), r.Source, r.Line)
	}
	return fmt.Sprintf("%s (%s)", r.String(), r.Source)
}

// Tool families: a rule for one member covers the others, as Claude Code
// applies Edit rules to every file-editing tool and Read rules to every
// file-reading tool.
var (
	editTools = map[string]bool{"Edit": true, "Write": true, "NotebookEdit": true, "MultiEdit": true}
	readTools = map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true}
)

func pathTool(name string) bool { return editTools[name] || readTools[name] }

// coversTool reports whether the rule is about calls of tool.
func (r *Rule) coversTool(tool string) bool {
	switch {
	case r.Tool == "*" || r.Tool == tool:
		return true
	case strings.HasPrefix(r.Tool, "mcp__"):
		return mcpCovers(r.Tool, tool)
	case editTools[r.Tool]:
		return editTools[tool]
	case r.Tool == "Read":
		return readTools[tool]
	}
	return false
}

// mcpCovers matches mcp__server (every tool of the server), mcp__server__*
// and mcp__server__prefix*, and exact tool names.
func mcpCovers(rule, tool string) bool {
	if p, ok := strings.CutSuffix(rule, "*"); ok {
		return strings.HasPrefix(tool, p)
	}
	if strings.Count(rule, "__") == 1 { // mcp__server
		return strings.HasPrefix(tool, rule+"__")
	}
	return false
}

// SplitRules splits a --allowedTools or --disallowedTools value into rules.
// Commas and whitespace separate rules only outside parentheses, so
// "Bash(npm run test:*), Read" is two rules. The flags may repeat; split
// each value and concatenate.
func SplitRules(s string) []string {
	var out []string
	depth, start := 0, -1
	flush := func(end int) {
		if start >= 0 {
			out = append(out, s[start:end])
			start = -1
		}
	}
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return out
}
