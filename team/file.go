package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/gofrs/flock"
)

// FileError reports a file that cannot be used: where (path, and line and
// column when known), what is wrong, and what to do.
type FileError struct {
	Path string
	Line int // 1-based; 0 when the problem is not at one place
	Col  int // 1-based, in characters
	Err  error
	Hint string // what the user should do, e.g. "fix it by hand or delete it"
}

func (e *FileError) Error() string {
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

func (e *FileError) Unwrap() error { return e.Err }

// jsonError turns a decoding error of data (read from path) into a
// FileError that names the line and column.
func jsonError(path string, data []byte, err error, hint string) *FileError {
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
	fe := &FileError{Path: path, Err: err, Hint: hint}
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

// decodeStrict decodes exactly one JSON value from data into v.
func decodeStrict(data []byte, v any) error {
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

// errLockGone: the directory holding the lock file does not exist.
var errLockGone = errors.New("lock file's directory is gone")

// lockFile takes a flock on path (created if missing, but never its
// directory), exclusive or shared. It waits until ctx ends or timeout
// passes. The lock is released with Unlock.
func lockFile(ctx context.Context, path string, shared bool, timeout time.Duration) (*flock.Flock, error) {
	lk, err := filelock.Lock(ctx, path, filelock.Options{Shared: shared, Create: true, Timeout: timeout,
		FirstDelay: 50 * time.Microsecond, MaxDelay: 5 * time.Millisecond, Check: filelock.SamePath(path, errLockGone)})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errLockGone
	}
	return lk, err
}
