package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Splitting a request body. A body is mostly its messages, and a client
// sends the same messages again on every turn; the memo (memo.go) answers
// those from their bytes. What is left is finding each message's bytes
// without decoding the body: encoding/json would check the whole body and
// then walk it again to copy every message out, two passes over megabytes
// for a lead with a thousand agents' results. splitBody walks it once. It
// checks the body's own structure (the object, its keys, the messages and
// tools arrays) and hands everything else to encoding/json: the members
// other than messages and tools as one small object, and each message or
// tool the memo has not seen. What it accepts and how it reads it match
// json.Unmarshal into wireRequest (a fuzz test compares the two), including
// key matching without regard to case and the last of duplicate keys
// winning.

// errSyntax marks a body that is not valid JSON.
var errSyntax = errors.New("invalid JSON")

// splitBody fills w from body: messages and tools as the raw bytes of
// their elements (sub-slices of body), the other members decoded.
func splitBody(body []byte, w *wireRequest) error {
	s := scan{b: body}
	s.ws()
	if s.literal("null") {
		s.ws()
		if s.i != len(s.b) {
			return errSyntax
		}
		return nil
	}
	if !s.byte('{') {
		return s.notObject()
	}
	var rest bytes.Buffer
	rest.WriteByte('{')
	var msgs, tools []byte
	s.ws()
	if !s.byte('}') {
		for {
			s.ws()
			key, keyRaw, err := s.key()
			if err != nil {
				return err
			}
			s.ws()
			if !s.byte(':') {
				return errSyntax
			}
			s.ws()
			v, err := s.value()
			if err != nil {
				return err
			}
			switch {
			case strings.EqualFold(key, "messages"):
				msgs = v
			case strings.EqualFold(key, "tools"):
				tools = v
			default:
				if rest.Len() > 1 {
					rest.WriteByte(',')
				}
				rest.Write(keyRaw)
				rest.WriteByte(':')
				rest.Write(v)
			}
			s.ws()
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return errSyntax
			}
		}
	}
	s.ws()
	if s.i != len(s.b) {
		return errSyntax
	}
	rest.WriteByte('}')
	if err := json.Unmarshal(rest.Bytes(), w); err != nil {
		return err
	}
	if msgs != nil {
		elems, err := elements(msgs, "messages")
		if err != nil {
			return err
		}
		if elems != nil {
			w.Messages = &elems
		}
	}
	if tools != nil {
		elems, err := elements(tools, "tools")
		if err != nil {
			return err
		}
		w.Tools = elems
	}
	return nil
}

// elements splits a JSON array into its elements' bytes. null gives nil;
// [] gives an empty, non-nil slice.
func elements(v []byte, field string) ([]json.RawMessage, error) {
	if string(v) == "null" {
		return nil, nil
	}
	s := scan{b: v}
	if !s.byte('[') {
		return nil, fmt.Errorf("%s: Input should be a valid list", field)
	}
	out := []json.RawMessage{}
	s.ws()
	if s.byte(']') {
		return out, nil
	}
	for {
		s.ws()
		e, err := s.value()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		s.ws()
		if s.byte(']') {
			return out, nil
		}
		if !s.byte(',') {
			return nil, errSyntax
		}
	}
}

// scan walks JSON text. It checks strings and the nesting of brackets;
// scalars and the insides of values are left to encoding/json.
//
// Its loops, which touch every byte of a body, are built without the
// race detector's instrumentation (go:norace): a scan reads a body no
// other goroutine holds, and under -race (how the tests that use the fake
// run) the instrumented loops cost a tsan call a byte, a third of the
// red-team corpus's request handling.
type scan struct {
	b []byte
	i int
}

//go:norace
func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it is next.
func (s *scan) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// literal consumes lit if it is next.
func (s *scan) literal(lit string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		s.i += len(lit)
		return true
	}
	return false
}

// notObject reports a body whose top level is not an object: a syntax
// error if it is not JSON at all.
func (s *scan) notObject() error {
	if !json.Valid(s.b) {
		return errSyntax
	}
	return errors.New("Input should be a valid dictionary or object")
}

// key reads an object key: its decoded text and its raw bytes.
func (s *scan) key() (string, []byte, error) {
	start := s.i
	if err := s.str(); err != nil {
		return "", nil, err
	}
	raw := s.b[start:s.i]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), raw, nil
	}
	var k string
	if err := json.Unmarshal(raw, &k); err != nil {
		return "", nil, errSyntax
	}
	return k, raw, nil
}

// str consumes a string, checking its escapes and that it holds no control
// characters.
//
//go:norace
func (s *scan) str() error {
	if !s.byte('"') {
		return errSyntax
	}
	for s.i < len(s.b) {
		// Skip plain bytes first: nearly all of a string is plain.
		for s.i < len(s.b) && strPlain[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return errSyntax
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					return errSyntax
				}
				s.i += 6
			default:
				return errSyntax
			}
		case c < 0x20:
			return errSyntax
		default:
			s.i++
		}
	}
	return errSyntax
}

// strPlain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var strPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// value consumes one value and returns its bytes. Objects and arrays are
// matched bracket for bracket with their strings checked; a scalar runs to
// the next delimiter.
//
//go:norace
func (s *scan) value() ([]byte, error) {
	start := s.i
	if s.i >= len(s.b) {
		return nil, errSyntax
	}
	switch s.b[s.i] {
	case '"':
		if err := s.str(); err != nil {
			return nil, err
		}
	case '{', '[':
		var stack []byte
		for {
			if s.i >= len(s.b) {
				return nil, errSyntax
			}
			switch c := s.b[s.i]; c {
			case '"':
				if err := s.str(); err != nil {
					return nil, err
				}
				continue
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				open := byte('{')
				if c == ']' {
					open = '['
				}
				if len(stack) == 0 || stack[len(stack)-1] != open {
					return nil, errSyntax
				}
				stack = stack[:len(stack)-1]
			}
			s.i++
			if len(stack) == 0 {
				return s.b[start:s.i], nil
			}
		}
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				if s.i == start {
					return nil, errSyntax
				}
				return s.b[start:s.i], nil
			}
			s.i++
		}
		if s.i == start {
			return nil, errSyntax
		}
	}
	return s.b[start:s.i], nil
}
