package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// An answer file is Markdown: prose is text, and a fenced block whose info
// string is `tool NAME` is a tool call with its input in YAML or JSON
// (`tool! NAME` skips the checks against the offered tools), `thinking` a
// thinking block. Other fences (```go) belong to the text around them. A
// special block ends at a line of at least as many backticks as opened it,
// so a tool input holding ``` opens with ````.

// AnswerError is a malformed answer: the file, the line and what to change.
type AnswerError struct {
	File string
	Line int // 0: the whole file
	Msg  string
}

func (e *AnswerError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// fence is an opening fence line: its backticks and what follows them.
type fence struct {
	ticks int
	info  string
}

// openFence reads a line that opens a fenced block (three or more
// backticks at the start of the line).
func openFence(line string) (fence, bool) {
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	if n < 3 || strings.Contains(line[n:], "`") {
		return fence{}, false
	}
	return fence{n, strings.TrimSpace(line[n:])}, true
}

// closes reports whether line ends a block opened by f.
func (f fence) closes(line string) bool {
	t := strings.TrimRight(line, " \t")
	return len(t) >= f.ticks && strings.Trim(t, "`") == ""
}

// special is what a fence's info string asks for: "tool", "tool!",
// "thinking", or "" for an ordinary fence.
func (f fence) special() (kind, name string) {
	word, rest, _ := strings.Cut(f.info, " ")
	switch word {
	case "tool", "tool!":
		return word, strings.TrimSpace(rest)
	case "thinking":
		return word, ""
	}
	return "", ""
}

// ParseAnswer reads an answer file's content into content blocks, checking
// tool calls against the tools the request offers (nil: no checks). file
// names the file in errors.
func ParseAnswer(file string, data []byte, tools []fakeapi.Tool) ([]fakeapi.Block, error) {
	errf := func(line int, format string, args ...any) error {
		return &AnswerError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var blocks []fakeapi.Block
	var text []string
	flushText := func() {
		if t := strings.TrimSpace(strings.Join(text, "\n")); t != "" {
			blocks = append(blocks, fakeapi.TextBlock(t))
		}
		text = nil
	}
	var plain *fence // an ordinary fence the text is inside
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if plain != nil {
			text = append(text, line)
			if plain.closes(line) {
				plain = nil
			}
			continue
		}
		f, ok := openFence(line)
		if !ok {
			text = append(text, line)
			continue
		}
		kind, name := f.special()
		if kind == "" {
			plain = &f
			text = append(text, line)
			continue
		}
		end := i + 1
		for end < len(lines) && !f.closes(lines[end]) {
			end++
		}
		if end == len(lines) {
			return nil, errf(i+1, "the %s block opened here is not closed; end it with a line of %s", strings.TrimSpace(line), strings.Repeat("`", f.ticks))
		}
		flushText()
		body := strings.Join(lines[i+1:end], "\n") + "\n"
		if kind == "thinking" {
			if strings.TrimSpace(body) == "" {
				return nil, errf(i+1, "the thinking block is empty; write the reasoning or remove the block")
			}
			blocks = append(blocks, fakeapi.ThinkingBlock(strings.TrimRight(body, "\n"), ""))
		} else {
			b, err := toolCall(file, i+1, name, body, kind == "tool!", tools)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		}
		i = end
	}
	flushText()
	if len(blocks) == 0 {
		return nil, errf(0, "the answer is empty; write text, or a tool call as a ```tool NAME block with its input inside")
	}
	return blocks, nil
}

// toolCall builds the tool_use block of a ```tool NAME block opened on
// line; unchecked skips the checks against the offered tools.
func toolCall(file string, line int, name, body string, unchecked bool, tools []fakeapi.Tool) (fakeapi.Block, error) {
	errf := func(format string, args ...any) error {
		return &AnswerError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if name == "" || strings.ContainsAny(name, " \t") {
		return fakeapi.Block{}, errf("write the tool's name after `tool`, as in ```tool Bash (got %q)", name)
	}
	input, err := fakeapi.ToolInput(file, line+1, []byte(body))
	if err != nil {
		return fakeapi.Block{}, err
	}
	if unchecked || tools == nil {
		return fakeapi.ToolUseBlock("", name, input), nil
	}
	i := slices.IndexFunc(tools, func(t fakeapi.Tool) bool { return t.Name == name })
	if i < 0 {
		names := make([]string, len(tools))
		for k, t := range tools {
			names[k] = t.Name
		}
		list := strings.Join(names, ", ")
		if list == "" {
			list = "none"
		}
		return fakeapi.Block{}, errf("tool %q is not offered in this request (offered: %s); to call it anyway, open the block with ```tool! %s", name, list, name)
	}
	if msg := checkInput(tools[i].InputSchema, input); msg != "" {
		return fakeapi.Block{}, errf("tool %s: %s; to send it anyway, open the block with ```tool! %s", name, msg, name)
	}
	return fakeapi.ToolUseBlock("", name, input), nil
}

// checkInput checks input's top-level fields against a schema's required
// list and, when it forbids additional properties, its properties: the
// mistakes a hand-written call makes. It returns "" when they hold.
func checkInput(schema, input json.RawMessage) string {
	var s struct {
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(schema, &s) != nil || json.Unmarshal(input, &in) != nil {
		return ""
	}
	var missing, unknown []string
	for _, r := range s.Required {
		if _, ok := in[r]; !ok {
			missing = append(missing, r)
		}
	}
	if s.AdditionalProperties != nil && !*s.AdditionalProperties && s.Properties != nil {
		for k := range in {
			if _, ok := s.Properties[k]; !ok {
				unknown = append(unknown, k)
			}
		}
	}
	slices.Sort(unknown)
	var msgs []string
	if len(missing) > 0 {
		msgs = append(msgs, "missing required field "+strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		known := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			known = append(known, k)
		}
		slices.Sort(known)
		msgs = append(msgs, fmt.Sprintf("unknown field %s (the schema has %s)", strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	return strings.Join(msgs, "; ")
}

// sameAnswer reports whether an assistant message holds the blocks
// answered: the same text and the same tool calls (ids aside).
func sameAnswer(m fakeapi.Message, answered []fakeapi.Block) bool {
	pick := func(bs []fakeapi.Block) []string {
		var out []string
		for _, b := range bs {
			switch b.Type {
			case "text":
				out = append(out, "text:"+strings.TrimSpace(b.Text))
			case "tool_use":
				out = append(out, "tool:"+b.Name+":"+canonical(b.Input))
			}
		}
		return out
	}
	return slices.Equal(pick(m.Content), pick(answered))
}

// canonical re-encodes JSON with sorted keys, so two encodings of the same
// value compare equal.
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(bytes.TrimSpace(raw))
	}
	out, _ := json.Marshal(v)
	return string(out)
}
