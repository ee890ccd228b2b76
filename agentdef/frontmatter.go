package agentdef

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize bounds an agent file; anything larger is refused unread.
const MaxFileSize = 1 << 20

const fence = "---"

// Parse reads one agent file: YAML frontmatter between "---" lines at the
// very top (a UTF-8 BOM and CRLF line ends are tolerated) and a Markdown body
// that becomes the system prompt. path is used in messages only.
//
// known lists the tool names that exist; a tools or disallowedTools entry
// that is not among them (and is not an mcp__ name) is dropped with a
// warning. A nil known skips that check.
//
// Every error is a *ParseError (possibly several, joined) that names path
// and a line.
func Parse(path string, data []byte, known []string) (*Definition, []Warning, error) {
	if len(data) > MaxFileSize {
		return nil, nil, &ParseError{Path: path, Line: 1, Message: fmt.Sprintf("file is %d bytes; agent files are limited to %d", len(data), MaxFileSize)}
	}
	fm, body, err := split(path, data)
	if err != nil {
		return nil, nil, err
	}
	dc := newDecoder(path, 1, "", known)
	root, repaired, err := parseYAML(fm)
	if err != nil {
		return nil, nil, yamlError(path, err)
	}
	for _, r := range repaired {
		dc.warns = append(dc.warns, Warning{Path: path, Line: r.line + 1, Message: r.why})
	}
	d := &Definition{Prompt: strings.TrimSpace(body)}
	if root == nil {
		dc.errs = append(dc.errs, &ParseError{Path: path, Line: 1, Message: "frontmatter is empty: name and description are required"})
	} else {
		dc.definition(root, d, false)
	}
	if err := dc.err(); err != nil {
		return nil, dc.warns, err
	}
	if d.Prompt == "" {
		dc.warns = append(dc.warns, Warning{Path: path, Line: 1, Message: "the body is empty, so the agent has no system prompt"})
	}
	return d, dc.warns, nil
}

// split separates the frontmatter from the body. Line numbers in fm start at
// file line 2.
func split(path string, data []byte) (fm []byte, body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimRight(first, " \t") != fence {
		return nil, "", &ParseError{Path: path, Line: 1, Message: "no frontmatter: an agent file starts with a '---' line, then YAML with at least name and description, then '---' and the prompt"}
	}
	for off := 0; off <= len(rest); {
		line, next, found := strings.Cut(rest[off:], "\n")
		if strings.TrimRight(line, " \t") == fence {
			return []byte(rest[:off]), next, nil
		}
		if !found {
			break
		}
		off += len(line) + 1
	}
	return nil, "", &ParseError{Path: path, Line: 1, Message: "frontmatter is not closed: add a '---' line after the YAML"}
}

// repair is one frontmatter line rewritten so that YAML can read it.
type repair struct {
	line int // in the frontmatter, 1-based
	why  string
}

// parseYAML decodes the frontmatter into a node tree; root is nil for an
// empty document. When YAML rejects it, the top-level values that Claude
// Code reads but YAML does not (an unquoted ": " in a description, a bare
// "*" for all tools) are quoted and the parse retried; repaired lists the
// lines that were changed.
func parseYAML(fm []byte) (root *yaml.Node, repaired []repair, err error) {
	var doc yaml.Node
	err = yaml.Unmarshal(fm, &doc)
	if err != nil {
		fixed, lines := quoteLooseValues(fm)
		if len(lines) == 0 || yaml.Unmarshal(fixed, &doc) != nil {
			return nil, nil, err
		}
		repaired = lines
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, repaired, nil
	}
	return doc.Content[0], repaired, nil
}

var (
	topLevelScalar = lazyre.New(`^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(.+)$`)
	yamlLine       = lazyre.New(`^yaml: line (\d+): (.*)$`)
	// bareStar is a value that YAML takes for an alias with no name: "*",
	// "* ", "*, Read".
	bareStar = lazyre.New(`^\*([\s,]|$)`)
)

// quoteLooseValues rewrites top-level `key: value` lines whose plain value
// holds ": " or starts with a bare "*" into double-quoted strings. Lines
// followed by an indented continuation are left alone. Line numbers do not
// move.
func quoteLooseValues(fm []byte) ([]byte, []repair) {
	lines := strings.Split(string(fm), "\n")
	var changed []repair
	for i, l := range lines {
		m := topLevelScalar.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := strings.TrimRight(m[2], " \t")
		var why string
		switch {
		case bareStar.MatchString(v):
			why = fmt.Sprintf(`value %s was read as text; write it in quotes ("%s") so YAML does not take it for an alias`, v, v)
		case !strings.Contains(v, ": ") || strings.ContainsAny(v[:1], `"'[{|>&*!%@#`+"`"):
			continue
		default:
			why = `value contains ": " and was read as quoted text; put it in quotes so YAML reads it as intended`
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") {
			continue
		}
		lines[i] = m[1] + ": " + strconv.Quote(v)
		changed = append(changed, repair{line: i + 1, why: why})
	}
	return []byte(strings.Join(lines, "\n")), changed
}

// yamlError turns a yaml.v3 syntax error into a ParseError on the file line
// (frontmatter line 1 is file line 2).
func yamlError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 2
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			line, msg = n+1, m[2]
		}
	}
	return &ParseError{Path: path, Line: line, Message: "frontmatter is not valid YAML: " + msg}
}
