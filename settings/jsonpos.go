package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// node is a JSON value with its byte range in the file, so that every
// message can name a line and column.
type node struct {
	start, end int
	kind       byte // '{' object, '[' array, 's' string, 'v' other scalar
	str        string
	keys       []string // object keys in file order, without duplicates
	fields     map[string]*node
	keyStart   map[string]int
	items      []*node
}

// raw returns the value's bytes.
func (n *node) raw(data []byte) json.RawMessage { return json.RawMessage(data[n.start:n.end]) }

// kindName names the JSON type for messages.
func (n *node) kindName() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 's':
		return "a string"
	}
	switch n.str {
	case "null":
		return "null"
	case "true", "false":
		return "a boolean"
	}
	return "a number"
}

// posError is a JSON problem at a byte offset.
type posError struct {
	off int
	msg string
}

func (e *posError) Error() string { return e.msg }

// duplicate records a key that appears twice in one object.
type duplicate struct {
	key string
	off int
}

type treeParser struct {
	data []byte
	dec  *json.Decoder
	dups []duplicate
}

// parseTree parses data into a node tree. Errors are *posError.
func parseTree(data []byte) (*node, []duplicate, error) {
	p := &treeParser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	n, err := p.value(0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		off := p.skip(int(p.dec.InputOffset()))
		return nil, nil, &posError{off: off, msg: "unexpected data after the end of the JSON object"}
	}
	return n, p.dups, nil
}

// maxDepth bounds nesting so a hostile file cannot exhaust the stack.
const maxDepth = 10000

func (p *treeParser) skip(off int) int {
	for off < len(p.data) {
		switch p.data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func (p *treeParser) fail(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// In token mode the decoder reports the offset where the value
		// it was scanning starts (or the offending byte).
		return &posError{off: p.skip(int(se.Offset)), msg: se.Error()}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &posError{off: len(p.data), msg: "unexpected end of file (a bracket, brace or quote is not closed)"}
	}
	return &posError{off: int(p.dec.InputOffset()), msg: err.Error()}
}

func (p *treeParser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &posError{off: int(p.dec.InputOffset()), msg: "nested too deeply"}
	}
	start := p.skip(int(p.dec.InputOffset()))
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.fail(err)
	}
	n := &node{start: start}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			if err := p.object(n, depth); err != nil {
				return nil, err
			}
		case '[':
			if err := p.array(n, depth); err != nil {
				return nil, err
			}
		default:
			return nil, &posError{off: start, msg: fmt.Sprintf("unexpected %q", rune(t))}
		}
	case string:
		n.kind, n.str = 's', t
	case json.Number:
		n.kind, n.str = 'v', t.String()
	case bool:
		n.kind, n.str = 'v', fmt.Sprint(t)
	case nil:
		n.kind, n.str = 'v', "null"
	}
	n.end = int(p.dec.InputOffset())
	return n, nil
}

func (p *treeParser) object(n *node, depth int) error {
	n.kind = '{'
	n.fields = map[string]*node{}
	n.keyStart = map[string]int{}
	for p.dec.More() {
		koff := p.skip(int(p.dec.InputOffset()))
		ktok, err := p.dec.Token()
		if err != nil {
			return p.fail(err)
		}
		key, _ := ktok.(string)
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		if _, dup := n.fields[key]; dup {
			p.dups = append(p.dups, duplicate{key: key, off: koff})
		} else {
			n.keys = append(n.keys, key)
		}
		n.fields[key] = v
		n.keyStart[key] = koff
	}
	if _, err := p.dec.Token(); err != nil { // '}'
		return p.fail(err)
	}
	return nil
}

func (p *treeParser) array(n *node, depth int) error {
	n.kind = '['
	for p.dec.More() {
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		n.items = append(n.items, v)
	}
	if _, err := p.dec.Token(); err != nil { // ']'
		return p.fail(err)
	}
	return nil
}

// lineCol converts a byte offset into a 1-based line and column (columns
// count characters, not bytes).
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	lastNL := bytes.LastIndexByte(before, '\n')
	col = 1 + utf8.RuneCount(before[lastNL+1:])
	return line, col
}
