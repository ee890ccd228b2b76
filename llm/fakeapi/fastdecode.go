package fakeapi

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Decoding a message without encoding/json. A message's blocks nest two or
// three levels deep (a tool_result's content holds blocks of its own), and
// json.Unmarshal with the Block and Message UnmarshalJSON methods checks the
// bytes of every level again before decoding it: each byte of a new message
// was scanned three or four times, the largest cost left in the fake when a
// thousand agents talk to it. fastMessage reads a message in one pass for
// the shape clients send — the API's lower-case keys, each once, no nulls —
// and gives up (ok false) on anything else, which the caller then decodes
// with encoding/json. Whatever fastMessage accepts it reads exactly as
// json.Unmarshal would (FuzzFastMessage compares the two).

// decodeMessage decodes one message of a request.
func decodeMessage(raw json.RawMessage) (Message, error) {
	if m, ok := fastMessage(raw); ok {
		return m, nil
	}
	var m Message
	err := json.Unmarshal(raw, &m)
	return m, err
}

// decodeSystem decodes a request's system field (a string or blocks).
func decodeSystem(raw json.RawMessage) ([]Block, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] != '{' && string(trimmed) != "null" {
		own := append([]byte(nil), trimmed...)
		if blocks, ok := fastContent(own); ok {
			return blocks, nil
		}
	}
	return decodeContent(raw)
}

// fastMessage decodes data as json.Unmarshal into a Message would, or
// reports that it cannot (ok false).
func fastMessage(data []byte) (m Message, ok bool) {
	own := append([]byte(nil), data...) // the decoded values point into it
	var seen uint8
	ok = members(own, func(key, v []byte) bool {
		var bit uint8
		good := false
		switch string(key) {
		case "role":
			bit = 1
			m.Role, good = fastString(v)
		case "content":
			bit = 2
			m.Content, good = fastContent(v)
		}
		if !good || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	return m, ok
}

// fastContent is decodeContent for v, a string or an array of blocks.
func fastContent(v []byte) ([]Block, bool) {
	switch v[0] {
	case '"':
		s, ok := fastString(v)
		if !ok {
			return nil, false
		}
		return []Block{textBlock(s)}, true
	case '[':
		blocks := []Block{}
		s := scan{b: v, i: 1}
		s.ws()
		if s.byte(']') {
			return blocks, s.i == len(v)
		}
		for {
			s.ws()
			e, err := s.value()
			if err != nil {
				return nil, false
			}
			b, ok := fastBlock(e)
			if !ok {
				return nil, false
			}
			blocks = append(blocks, b)
			s.ws()
			if s.byte(']') {
				return blocks, s.i == len(v)
			}
			if !s.byte(',') {
				return nil, false
			}
		}
	}
	return nil, false
}

// blockKeys numbers the keys fastBlock reads, to catch repeats.
var blockKeys = map[string]uint16{
	"type": 1 << 0, "text": 1 << 1, "id": 1 << 2, "name": 1 << 3, "input": 1 << 4,
	"tool_use_id": 1 << 5, "content": 1 << 6, "is_error": 1 << 7, "thinking": 1 << 8,
	"signature": 1 << 9, "data": 1 << 10, "source": 1 << 11, "cache_control": 1 << 12, "tool_name": 1 << 13,
}

// fastBlock decodes one block as Block.UnmarshalJSON would.
func fastBlock(v []byte) (b Block, ok bool) {
	var seen uint16
	ok = members(v, func(key, val []byte) bool {
		bit := blockKeys[string(key)]
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		good := false
		switch string(key) {
		case "type":
			b.Type, good = fastString(val)
		case "text":
			b.Text, good = fastString(val)
		case "id":
			b.ID, good = fastString(val)
		case "name":
			b.Name, good = fastString(val)
		case "tool_use_id":
			b.ToolUseID, good = fastString(val)
		case "tool_name":
			b.ToolName, good = fastString(val)
		case "thinking":
			b.Thinking, good = fastString(val)
		case "signature":
			b.Signature, good = fastString(val)
		case "data":
			b.Data, good = fastString(val)
		case "input":
			b.Input, good = fastRaw(val)
		case "source":
			b.Source, good = fastRaw(val)
		case "cache_control":
			b.CacheControl, good = fastRaw(val)
		case "content":
			b.Content, good = fastContent(val)
		case "is_error":
			switch string(val) {
			case "true":
				b.IsError, good = true, true
			case "false":
				b.IsError, good = false, true
			}
		}
		return good
	})
	b.raw = v
	return b, ok
}

// members walks the object that is the whole of v (surrounding space
// allowed), calling f with each key and value; it stops with false when f
// does, and reports false for a key that needs unescaping or for anything
// that is not an object.
func members(v []byte, f func(key, val []byte) bool) bool {
	s := scan{b: v}
	s.ws()
	if !s.byte('{') {
		return false
	}
	s.ws()
	if !s.byte('}') {
		for {
			s.ws()
			start := s.i
			if s.str() != nil {
				return false
			}
			raw := s.b[start:s.i]
			if bytes.IndexByte(raw, '\\') >= 0 {
				return false
			}
			s.ws()
			if !s.byte(':') {
				return false
			}
			s.ws()
			val, err := s.value()
			if err != nil || !f(raw[1:len(raw)-1], val) {
				return false
			}
			s.ws()
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	s.ws()
	return s.i == len(s.b)
}

// fastString decodes v when it is a string (already checked by scan.str),
// as encoding/json does: escapes decoded, an unpaired surrogate or a byte
// that is not UTF-8 read as U+FFFD.
func fastString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	v = v[1 : len(v)-1]
	if bytes.IndexByte(v, '\\') < 0 && utf8.Valid(v) {
		return string(v), true
	}
	out := make([]byte, 0, len(v)+8)
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '\\':
			if i+1 >= len(v) {
				return "", false
			}
			switch e := v[i+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(v[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(v[min(i+2, len(v)):]); ok && i+1 < len(v) && v[i] == '\\' && v[i+1] == 'u' {
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							out = utf8.AppendRune(out, d)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(v[i:])
			i += size
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out), true
}

// hex4 reads the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// fastRaw keeps v as a RawMessage field would, when it is valid JSON and not
// null.
func fastRaw(v []byte) (json.RawMessage, bool) {
	if string(v) == "null" || !json.Valid(v) {
		return nil, false
	}
	return v, true
}
