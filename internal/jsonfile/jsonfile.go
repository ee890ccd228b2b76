// Package jsonfile reads the JSON files Cohort keeps for teams and task
// lists: one value per file, decoded strictly, and errors that name the
// file, the line and column, and what to do.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Error reports a file that cannot be used: where (path, and line and
// column when known), what is wrong, and what to do.
type Error struct {
	Path string
	Line int // 1-based; 0 when the problem is not at one place
	Col  int // 1-based, in characters
	Err  error
	Hint string // what the user should do, e.g. "fix it by hand or delete it"
}

func (e *Error) Error() string {
	where := e.Path
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Col)
	}
	msg := where + ": " + e.Err.Error()
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Explain turns a decoding error of data (read from path) into an Error
// that names the line and column.
func Explain(path string, data []byte, err error, hint string) *Error {
	off := -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var trail *trailingError
	switch {
	case errors.As(err, &syn):
		off = int(syn.Offset) - 1 // Offset counts the offending byte
		err = fmt.Errorf("invalid JSON: %v", syn)
	case errors.As(err, &typ):
		off = int(typ.Offset)
		field := typ.Field
		if field == "" {
			field = "value"
		}
		err = fmt.Errorf("%s: expected %s, found %s", field, jsonKind(typ.Type), typ.Value)
	case errors.As(err, &trail):
		off = trail.off
		err = errors.New("unexpected data after the JSON value")
	default:
		if len(bytes.TrimSpace(data)) == 0 {
			err = errors.New("the file is empty")
		} else {
			err = fmt.Errorf("invalid JSON: %v", err)
		}
	}
	fe := &Error{Path: path, Err: err, Hint: hint}
	if off >= 0 {
		fe.Line, fe.Col = lineCol(data, off)
	}
	return fe
}

// jsonKind names the JSON type that decodes into t.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.Number]() {
		return "a number"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	}
	return "a number"
}

// trailingError: more data follows the JSON value, at byte offset off.
type trailingError struct{ off int }

func (e *trailingError) Error() string { return "unexpected data after the JSON value" }

// Decode decodes exactly one JSON value from data into v; data after it
// is an error Explain places.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	rest := data[dec.InputOffset():]
	if trimmed := bytes.TrimLeft(rest, " \t\r\n"); len(trimmed) > 0 {
		return &trailingError{off: len(data) - len(trimmed)}
	}
	return nil
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return line, col
}

// CloneFields returns a deep copy of fields kept verbatim (those a file
// holds that Cohort does not know, written back as they were).
func CloneFields(e map[string]json.RawMessage) map[string]json.RawMessage {
	if e == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(e))
	for k, v := range e {
		out[k] = slices.Clone(v)
	}
	return out
}

// WithFields marshals known (a struct) and appends the members of extra
// (the fields Cohort does not know, kept verbatim) that do not collide with
// known's fields, in key order.
func WithFields(known any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := Plain(known)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	keys := knownKeys(reflect.TypeOf(known))
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop '}'
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if keys[k] {
			continue
		}
		v := extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("extra field %q holds invalid JSON", k)
		}
		kb, _ := json.Marshal(k)
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var keyCache sync.Map // reflect.Type → map[string]bool

// knownKeys returns the JSON names of t's exported fields.
func knownKeys(t reflect.Type) map[string]bool {
	if v, ok := keyCache.Load(t); ok {
		return v.(map[string]bool)
	}
	keys := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			keys[name] = true
		}
	}
	keyCache.Store(t, keys)
	return keys
}

// extras returns the members of the JSON object raw whose keys are not
// fields of t. raw that is not an object yields nil (the typed decode
// reports that).
func Fields(raw json.RawMessage, t reflect.Type) map[string]json.RawMessage {
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		return nil
	}
	keys := knownKeys(t)
	var out map[string]json.RawMessage
	for k, v := range all {
		if !keys[k] {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = v
		}
	}
	return out
}

// MillisTime converts an epoch-milliseconds number; zero or absent is the
// zero time.
func MillisTime(n json.Number, field string) (time.Time, error) {
	if n == "" {
		return time.Time{}, nil
	}
	ms, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
			return time.Time{}, fmt.Errorf("%s: %s is not a time in epoch milliseconds", field, n)
		}
		ms = int64(f)
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

// Millis is the inverse of MillisTime.
func Millis(t time.Time) json.Number {
	if t.IsZero() {
		return "0"
	}
	return json.Number(strconv.FormatInt(t.UnixMilli(), 10))
}

// Plain marshals v compactly without HTML escaping.
func Plain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Indent marshals v with two-space indentation and a final newline,
// without HTML escaping (paths and prompts stay readable).
func Indent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// NilIfEmpty is s, or nil when it is empty (omitted from the file).
func NilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// NonNil is s, or an empty slice for nil (written as []).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
