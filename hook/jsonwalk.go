package hook

import (
	"bytes"
	"encoding/json"
	"errors"
)

// member is one value inside a JSON object or array, with where it starts
// in the document it was cut from (so problems can name a line).
type member struct {
	key    string // object key; empty for array elements
	keyOff int    // byte offset of the key (of the value for elements)
	off    int    // byte offset of the value in the enclosing document
	val    json.RawMessage
}

var errNotContainer = errors.New("not a container")

// members returns the members of the JSON object (open '{') or array (open
// '[') in raw, in document order. base is raw's own offset in the
// enclosing document. A duplicate object key is returned twice.
func members(raw json.RawMessage, open json.Delim, base int) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != open {
		return nil, errNotContainer
	}
	var out []member
	for dec.More() {
		var m member
		m.keyOff = base + valueStart(raw, int(dec.InputOffset()))
		if open == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			m.key, _ = k.(string)
		}
		m.off = base + valueStart(raw, int(dec.InputOffset()))
		if err := dec.Decode(&m.val); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// valueStart skips the separators between the decoder's position and the
// next value.
func valueStart(raw []byte, off int) int {
	for off < len(raw) {
		switch raw[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// kindOf names the JSON type of raw for messages.
func kindOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
