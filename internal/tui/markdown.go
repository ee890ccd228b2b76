package tui

import (
	"regexp"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The model's text is Markdown; the conversation draws the parts a
// terminal can show (see the package doc): fenced code indented on its
// colour with the fences dropped, headings in bold, list items with a
// bullet and a hanging indent, quotes behind a bar, rules as a line, and
// inline **bold**, *italic*, `code` and [links](url). Everything else is
// the text as written. The text comes Cleaned, so no escape it holds
// reaches the terminal; the styles are the only escapes added.

var (
	mdCode   = lipgloss.NewStyle().Foreground(lipgloss.Color("14"))
	mdBold   = lipgloss.NewStyle().Bold(true)
	mdItalic = lipgloss.NewStyle().Italic(true)
	mdDim    = lipgloss.NewStyle().Faint(true)
)

var (
	mdFence   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(```+|~~~+)\\s*([^`\\s]*)") })
	mdHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`) })
	mdItem    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$`) })
	mdQuote   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}>\s?(.*)$`) })
	mdRule    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}([-*_])(\s*[-*_]){2,}\s*$`) })
)

// markdown draws text at width: the first line after lead ("● "), the
// others indented as far.
func markdown(text, lead string, width int) []string {
	indent := strings.Repeat(" ", ansi.StringWidth(lead))
	inner := max(width-len(indent), 1)
	var out []string
	fence := ""
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if fence != "" {
			if strings.HasPrefix(strings.TrimSpace(line), fence) {
				fence = ""
				continue
			}
			out = append(out, codeLines(line, inner)...)
			continue
		}
		if m := mdFence().FindStringSubmatch(line); m != nil {
			fence = m[1]
			if m[2] != "" {
				out = append(out, mdDim.Render(cut(m[2], inner)))
			}
			continue
		}
		out = append(out, blockLines(line, inner)...)
	}
	for i := range out {
		if i == 0 {
			out[i] = lead + out[i]
		} else if out[i] != "" {
			out[i] = indent + out[i]
		}
	}
	return out
}

// codeLines draws a line of a fenced block, cut into pieces of width
// (code keeps its spacing, so it is not wrapped at words).
func codeLines(line string, width int) []string {
	line = strings.ReplaceAll(line, "\t", "    ")
	if line == "" {
		return []string{""}
	}
	var out []string
	for line != "" {
		piece := ansi.Truncate(line, width, "")
		if piece == "" { // a character wider than the width
			piece = string([]rune(line)[:1])
		}
		out = append(out, mdCode.Render(piece))
		line = line[len(piece):]
	}
	return out
}

// blockLines draws one line outside a fence.
func blockLines(line string, width int) []string {
	if m := mdHeading().FindStringSubmatch(line); m != nil {
		return wrapSpans([]span{{m[2], mdBold}}, "", width)
	}
	if mdRule().MatchString(line) {
		return []string{mdDim.Render(strings.Repeat("─", min(width, 40)))}
	}
	if m := mdItem().FindStringSubmatch(line); m != nil {
		bullet := "• "
		if m[2][0] >= '0' && m[2][0] <= '9' {
			bullet = m[2] + " "
		}
		pad := strings.Repeat(" ", min(len(m[1]), width/2))
		return wrapSpans(inline(m[3]), pad+bullet, width)
	}
	if m := mdQuote().FindStringSubmatch(line); m != nil {
		return wrapSpans(inline(m[1]), mdDim.Render("│ "), width)
	}
	return wrapSpans(inline(line), "", width)
}

// span is a run of text in one style.
type span struct {
	text  string
	style lipgloss.Style
}

// inline splits a line at its emphasis, code and link marks. A mark
// without its closing partner is text.
func inline(s string) []span {
	var out []span
	plain := lipgloss.NewStyle()
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, span{text.String(), plain})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		if sp, n := mark(s, i); n > 0 {
			flush()
			out = append(out, sp...)
			i += n
			continue
		}
		text.WriteByte(s[i])
		i++
	}
	flush()
	return out
}

// mark reads the inline mark at s[i:], if one opens there and closes
// later: its spans and the bytes it took.
func mark(s string, i int) ([]span, int) {
	rest := s[i:]
	switch {
	case rest[0] == '`':
		if j := strings.IndexByte(rest[1:], '`'); j > 0 {
			return []span{{rest[1 : j+1], mdCode}}, j + 2
		}
	case strings.HasPrefix(rest, "**") || strings.HasPrefix(rest, "__"):
		if j := strings.Index(rest[2:], rest[:2]); j > 0 && rest[2] != ' ' && boundary(s, i) {
			return []span{{rest[2 : j+2], mdBold}}, j + 4
		}
	case rest[0] == '*' || rest[0] == '_':
		if j := strings.IndexByte(rest[1:], rest[0]); j > 0 && rest[1] != ' ' && rest[j] != ' ' && boundary(s, i) && !wordAt(s, i+j+2) {
			return []span{{rest[1 : j+1], mdItalic}}, j + 2
		}
	case rest[0] == '[':
		if m := mdLink().FindStringSubmatch(rest); m != nil {
			return []span{{m[1], lipgloss.NewStyle().Underline(true)}, {" (" + m[2] + ")", mdDim}}, len(m[0])
		}
	}
	return nil, 0
}

var mdLink = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\[([^\]]+)\]\(([^)\s]+)\)`) })

// boundary reports whether the mark at s[i] does not sit inside a word
// (snake_case and 2*3*4 stay as written).
func boundary(s string, i int) bool { return i == 0 || !wordAt(s, i-1) }

// wordAt reports whether s[i] is a letter or digit (false past the end).
func wordAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// wrapSpans lays spans out in lines of width, at spaces where it can; the
// first line starts with lead, the others with as many spaces.
func wrapSpans(spans []span, lead string, width int) []string {
	leadW := ansi.StringWidth(lead)
	hang := strings.Repeat(" ", leadW)
	var out []string
	var line strings.Builder
	line.WriteString(lead)
	used, empty := leadW, true
	newLine := func() {
		out = append(out, strings.TrimRight(line.String(), " "))
		line.Reset()
		line.WriteString(hang)
		used, empty = leadW, true
	}
	for _, sp := range spans {
		for _, word := range splitKeep(sp.text) {
			w := ansi.StringWidth(word)
			if word == " " && empty {
				continue
			}
			if used+w > width && !empty {
				newLine()
				if word == " " {
					continue
				}
			}
			for used+w > width && w > 0 { // a word longer than a line
				head := ansi.Truncate(word, max(width-used, 1), "")
				if head == "" {
					head = string([]rune(word)[:1])
				}
				line.WriteString(sp.style.Render(head))
				word = word[len(head):]
				w = ansi.StringWidth(word)
				newLine()
			}
			if word != "" {
				line.WriteString(sp.style.Render(word))
				used += w
				empty = false
			}
		}
	}
	out = append(out, strings.TrimRight(line.String(), " "))
	return out
}

// splitKeep splits s into words and single spaces.
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		j := strings.IndexByte(s, ' ')
		switch {
		case j < 0:
			return append(out, s)
		case j == 0:
			out = append(out, " ")
			s = s[1:]
		default:
			out = append(out, s[:j])
			s = s[j:]
		}
	}
	return out
}
