package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean makes text from outside (tool results, model output, agent names)
// safe to lay out: escape sequences and other control characters are
// removed, tabs become spaces, invalid UTF-8 becomes U+FFFD, and line breaks
// are kept only when multiline is set (else they become spaces). Nothing in
// the result can move the cursor, change colours or talk to the terminal.
func Clean(s string, multiline bool) string {
	if isPlain(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
			continue
		case c == '\n':
			if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		case c == '\t':
			b.WriteString("    ")
		case c == '\r':
			// a lone CR would rewrite the line; drop it
		case c < 0x20 || c == 0x7f:
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n <= 1:
				b.WriteRune(utf8.RuneError)
			case r >= 0x80 && r < 0xa0: // C1 controls (CSI, OSC as one rune)
			case r == '\u2028' || r == '\u2029':
				b.WriteByte(' ')
			case unicode.Is(unicode.Bidi_Control, r):
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		i++
	}
	return b.String()
}

// isPlain reports whether s needs no cleaning (the common case, kept
// cheap for the 5,000 events a second the tree must take).
func isPlain(s string, multiline bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= utf8.RuneSelf {
			if c == '\n' && multiline {
				continue
			}
			return false
		}
	}
	return true
}

// skipEscape returns the index after the escape sequence starting at s[i]
// (ESC): CSI (parameters, then a final byte), OSC, DCS, SOS, PM and APC
// (up to BEL or ST), or a two-byte sequence. An unterminated sequence
// runs to the end.
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		i++
		for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
			if s[i] == 0x1b {
				return i
			}
			i++
		}
		return min(i+1, len(s))
	case ']', 'P', 'X', '^', '_':
		i++
		for i < len(s) {
			switch {
			case s[i] == 0x07:
				return i + 1
			case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			case s[i] == 0x1b:
				return i
			}
			i++
		}
		return i
	}
	// ESC plus one byte (ESC c, ESC 7, charset designations take two).
	if s[i] == '(' || s[i] == ')' || s[i] == '*' || s[i] == '+' || s[i] == '#' || s[i] == '%' {
		return min(i+2, len(s))
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return i + n
}
