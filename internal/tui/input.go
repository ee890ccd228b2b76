package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// editor is the multi-line input: a rune buffer with a cursor, history
// (Up and Down on the first and last line), Alt+Enter or Ctrl+J for a new
// line, and Tab completing an @path or a /command. It draws no blinking
// cursor: a blink is a timer, and an idle UI must not tick.
type editor struct {
	buf     []rune
	pos     int
	history []string
	hist    int // len(history) while editing a new entry
	draft   string
}

func (e *editor) text() string { return string(e.buf) }

func (e *editor) set(s string) {
	e.buf = []rune(s)
	e.pos = len(e.buf)
}

func (e *editor) insert(s string) {
	r := []rune(strings.ReplaceAll(Clean(s, true), cursorMark, ""))
	e.buf = slices.Insert(e.buf, e.pos, r...)
	e.pos += len(r)
}

// submit takes the text, records it in the history and clears the input.
func (e *editor) submit() string {
	s := strings.TrimSpace(e.text())
	if s != "" && (len(e.history) == 0 || e.history[len(e.history)-1] != s) {
		e.history = append(e.history, s)
	}
	e.hist = len(e.history)
	e.set("")
	return s
}

// key edits the buffer; it reports false for keys it does not take.
func (e *editor) key(k tea.KeyPressMsg, dir string) bool {
	switch k.String() {
	case "left":
		e.pos = max(e.pos-1, 0)
	case "right":
		e.pos = min(e.pos+1, len(e.buf))
	case "home", "ctrl+a":
		e.pos = e.lineStart()
	case "end", "ctrl+e":
		e.pos = e.lineEnd()
	case "backspace":
		if e.pos > 0 {
			e.buf = slices.Delete(e.buf, e.pos-1, e.pos)
			e.pos--
		}
	case "delete", "ctrl+d":
		if e.pos < len(e.buf) {
			e.buf = slices.Delete(e.buf, e.pos, e.pos+1)
		}
	case "ctrl+u":
		e.buf = slices.Delete(e.buf, e.lineStart(), e.pos)
		e.pos = e.lineStart()
	case "ctrl+k":
		e.buf = slices.Delete(e.buf, e.pos, e.lineEnd())
	case "alt+enter", "ctrl+j", "shift+enter":
		e.insert("\n")
	case "up":
		if !strings.Contains(string(e.buf[:e.pos]), "\n") {
			e.recall(-1)
		} else {
			e.pos = e.lineStart() - 1
		}
	case "down":
		if !strings.Contains(string(e.buf[e.pos:]), "\n") {
			e.recall(+1)
		} else {
			e.pos = e.lineEnd() + 1
		}
	case "tab":
		e.complete(dir)
	default:
		if k.Text == "" {
			return false
		}
		e.insert(k.Text)
	}
	return true
}

func (e *editor) lineStart() int {
	i := e.pos
	for i > 0 && e.buf[i-1] != '\n' {
		i--
	}
	return i
}

func (e *editor) lineEnd() int {
	i := e.pos
	for i < len(e.buf) && e.buf[i] != '\n' {
		i++
	}
	return i
}

func (e *editor) recall(step int) {
	if len(e.history) == 0 {
		return
	}
	if e.hist == len(e.history) {
		e.draft = e.text()
	}
	e.hist = min(max(e.hist+step, 0), len(e.history))
	if e.hist == len(e.history) {
		e.set(e.draft)
		return
	}
	e.set(e.history[e.hist])
}

// complete extends the @path before the cursor to the longest prefix its
// matches under dir share (a directory gets its slash).
func (e *editor) complete(dir string) {
	before := string(e.buf[:e.pos])
	at := strings.LastIndexAny(before, " \n")
	word := before[at+1:]
	if !strings.HasPrefix(word, "@") {
		return
	}
	matches := completePath(dir, word[1:])
	if len(matches) == 0 {
		return
	}
	common := matches[0]
	for _, m := range matches[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	if rest := strings.TrimPrefix(common, word[1:]); rest != "" {
		e.insert(rest)
	}
}

// completePath lists the paths under dir that start with prefix (at most
// 50), directories with a trailing slash. Hidden entries show only when
// the prefix asks for them.
func completePath(dir, prefix string) []string {
	base, name := filepath.Split(prefix)
	if filepath.IsAbs(base) || strings.Contains(base, "..") {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(dir, base))
	if err != nil {
		return nil
	}
	var out []string
	for _, en := range entries {
		n := en.Name()
		if !strings.HasPrefix(n, name) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(name, ".")) {
			continue
		}
		p := base + n
		if en.IsDir() {
			p += "/"
		}
		out = append(out, p)
		if len(out) == 50 {
			break
		}
	}
	return out
}

// view draws the input with a visible cursor cell, wrapped to width.
func (e *editor) view(prompt string, width int, st styles) []string {
	text := string(e.buf[:e.pos]) + cursorMark + string(e.buf[e.pos:])
	var out []string
	for i, line := range strings.Split(text, "\n") {
		p := "  "
		if i == 0 {
			p = prompt
		}
		for _, w := range wrap(p+line, width) {
			out = append(out, withCursor(w, st))
		}
	}
	return out
}

// withCursor draws the cell at the marker inverted: the character
// under the cursor, or a space at the end of the line.
func withCursor(w string, st styles) string {
	i := strings.Index(w, cursorMark)
	if i < 0 {
		return w
	}
	rest := []rune(w[i+len(cursorMark):])
	if len(rest) == 0 {
		return w[:i] + st.cursor.Render(" ")
	}
	return w[:i] + st.cursor.Render(string(rest[0])) + string(rest[1:])
}
