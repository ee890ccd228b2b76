package openai

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Decoding the JSON strings of deltas by hand, piece by piece. A server may
// cut a character between two chunks: a multi-byte UTF-8 sequence split
// into raw bytes in two strings (servers that stream byte-level tokens), or
// a character outside the BMP split into its two escaped surrogate halves
// (servers that slice UTF-16). encoding/json turns each half into U+FFFD;
// fragText instead holds an incomplete end back until the next piece
// completes it, so that the text adds up to what the model wrote.

// fragText decodes the pieces of one string as they arrive.
type fragText struct {
	pending []byte // an incomplete end: raw bytes, or a \uD8xx escape
}

// add decodes the body of a JSON string literal (the bytes between its
// quotes) after what is pending, and returns the complete characters.
func (f *fragText) add(body []byte) string {
	in := append(f.pending, body...)
	out, rest := decodeBody(in, false)
	f.pending = append([]byte(nil), rest...)
	return out
}

// flush returns what is still pending, invalid parts as U+FFFD.
func (f *fragText) flush() string {
	out, _ := decodeBody(f.pending, true)
	f.pending = nil
	return out
}

// decodeBody decodes the escapes of a JSON string body. Unless final, an
// incomplete UTF-8 sequence or high surrogate escape at the end is returned
// as rest instead of being decoded. Invalid bytes and lone surrogates
// become U+FFFD, as encoding/json decodes them.
func decodeBody(b []byte, final bool) (string, []byte) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			if i+1 >= len(b) {
				if final {
					return string(utf8.AppendRune(out, utf8.RuneError)), nil
				}
				return string(out), b[i:]
			}
			if b[i+1] != 'u' {
				out = append(out, unescape(b[i+1]))
				i += 2
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				if !final && i+6 > len(b) {
					return string(out), b[i:]
				}
				out = utf8.AppendRune(out, utf8.RuneError)
				i += 2
				continue
			}
			if utf16.IsSurrogate(r) && r < 0xdc00 {
				// A high surrogate needs the low one that follows.
				if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if r2, ok := hex4(b, i+8); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							out = utf8.AppendRune(out, dec)
							i += 12
							continue
						}
					}
				}
				if !final && i+12 > len(b) {
					return string(out), b[i:]
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			i += 6
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			if !final && !utf8.FullRune(b[i:]) {
				return string(out), b[i:]
			}
			r, size := utf8.DecodeRune(b[i:])
			out = utf8.AppendRune(out, r)
			i += size
		}
	}
	return string(out), nil
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return c // " \ / and anything else as itself
}

// hex4 reads the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(v), err == nil
}

// stringBody returns the body of raw when raw is a JSON string literal
// (the bytes between its quotes), and false for anything else (null, a
// number, an object).
func stringBody(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}
