// Package jsonenc writes the JSON of request bodies by hand, for the model
// providers (llm/claude, llm/openai): strings escaped exactly as
// encoding/json escapes them (HTML characters included), caller-given JSON
// (tool schemas, tool input) compacted as it is, never through a map whose
// key order is random, and a per-Model cache of the parts that are the same
// bytes on every request. The same request thus gives the same bytes, which
// prompt caching needs, for a fraction of the CPU of the SDKs' parameter
// types.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plainASCII marks the ASCII bytes a JSON string carries as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// AppendString appends s as a JSON string, escaped as encoding/json escapes
// it: control characters, quote and backslash, the HTML-sensitive <, > and
// &, U+2028 and U+2029; invalid UTF-8 becomes U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain ASCII bytes at a time: most text has long runs.
		for i+8 <= len(s) && plainWord(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
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

// plainWord reports whether the eight bytes of w are all plainASCII.
func plainWord(w string) bool {
	_ = w[7]
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	// Non-ASCII sets a high bit. Then no byte is above 0x7f, so adding 0x60
	// to each carries into no other and sets its high bit exactly when the
	// byte is at least 0x20.
	if x&highs != 0 || (x+0x6060606060606060)&highs != highs {
		return false
	}
	return !hasZero(x^(ones*'"')) && !hasZero(x^(ones*'\\')) && !hasZero(x^(ones*'<')) &&
		!hasZero(x^(ones*'>')) && !hasZero(x^(ones*'&'))
}

// appendHTMLEscaped appends valid, compact JSON with <, >, &, U+2028 and
// U+2029 escaped, which is what encoding/json does to the raw JSON a
// json.Marshaler returns. In valid JSON these only occur inside strings.
func appendHTMLEscaped(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '<' || c == '>' || c == '&' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
		}
		// U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
		if c == 0xe2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xa8 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xf])
			i += 2
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// CompactObject returns raw compacted and HTML-escaped, or fallback when
// raw is empty. It fails when raw is not a JSON object. Compacting is what
// encoding/json would do on the wire anyway; doing it here makes the error
// for bad JSON ours, with its location.
func CompactObject(raw json.RawMessage, fallback string) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte(fallback), nil
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if buf.Bytes()[0] != '{' {
		return nil, fmt.Errorf("JSON %.40q is not an object", buf.String())
	}
	return appendHTMLEscaped(make([]byte, 0, buf.Len()+16), buf.Bytes()), nil
}
