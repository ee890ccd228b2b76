// Package jsonstr writes a Go string as a JSON string exactly as
// encoding/json writes it — with its HTML escaping (json.Marshal) or
// without (a json.Encoder with SetEscapeHTML(false)) — by hand: no
// reflection, no allocation beyond dst's growth, eight plain ASCII bytes
// skipped at a time. Request bodies (llm/internal/jsonenc) and tool
// schemas (tool) use it: the same string always gives the same bytes,
// which prompt caching needs, for a fraction of encoding/json's CPU.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// plain[html] marks the ASCII bytes a JSON string carries as they are:
// with html, <, > and & are escaped too.
var plain = func() (t [2][utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[0][c], t[1][c] = true, true
	}
	for _, c := range `"\` {
		t[0][c], t[1][c] = false, false
	}
	for _, c := range `<>&` {
		t[1][c] = false
	}
	return t
}()

// AppendHTML appends s as json.Marshal writes it: control characters,
// quote and backslash escaped (\b, \f, \n, \r, \t short), the
// HTML-sensitive <, > and &, U+2028 and U+2029; invalid UTF-8 becomes
// U+FFFD.
func AppendHTML(dst []byte, s string) []byte { return appendString(dst, s, 1) }

// Append appends s as a json.Encoder with SetEscapeHTML(false) writes it:
// as AppendHTML, but <, > and & are left as they are.
func Append(dst []byte, s string) []byte { return appendString(dst, s, 0) }

func appendString(dst []byte, s string, html int) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain ASCII bytes at a time: most text has long runs.
		for i+8 <= len(s) && plainWord(s[i:i+8], html == 1) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[html][c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Word-at-a-time tests (each reports whether any of the eight bytes of x
// is so).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

func hasZero(x uint64) bool { return (x-ones)&^x&highs != 0 }

// plainWord reports whether the eight bytes of w are all plain.
func plainWord(w string, html bool) bool {
	_ = w[7]
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	// Non-ASCII sets a high bit. Then no byte is above 0x7f, so adding 0x60
	// to each carries into no other and sets its high bit exactly when the
	// byte is at least 0x20.
	if x&highs != 0 || (x+0x6060606060606060)&highs != highs {
		return false
	}
	if hasZero(x^(ones*'"')) || hasZero(x^(ones*'\\')) {
		return false
	}
	return !html || !hasZero(x^(ones*'<')) && !hasZero(x^(ones*'>')) && !hasZero(x^(ones*'&'))
}
