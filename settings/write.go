package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/gofrs/flock"
)

// Document is a JSON object being edited. It keeps the order of its keys
// and the bytes of the values it does not change. Not safe for concurrent
// use.
type Document struct {
	keys []string
	vals map[string]json.RawMessage
}

// ParseDocument parses a JSON object (empty input is an empty object).
// Errors name the line and column.
func ParseDocument(data []byte) (*Document, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	d := &Document{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return d, nil
	}
	tree, _, err := parseTree(data)
	if err == nil && tree.kind != '{' {
		err = &posError{off: tree.start, msg: "the top level must be a JSON object, not " + tree.kindName()}
	}
	if err != nil {
		var pe *posError
		errors.As(err, &pe)
		line, col := lineCol(data, pe.off)
		return nil, fmt.Errorf("%d:%d: %s", line, col, pe.msg)
	}
	for _, k := range tree.keys {
		d.keys = append(d.keys, k)
		d.vals[k] = tree.fields[k].raw(data)
	}
	return d, nil
}

// Keys returns the keys in order.
func (d *Document) Keys() []string { return append([]string(nil), d.keys...) }

// Get returns the raw value of key.
func (d *Document) Get(key string) (json.RawMessage, bool) {
	v, ok := d.vals[key]
	return v, ok
}

// Set stores v (marshalled to JSON) under key, appending new keys at the end.
func (d *Document) Set(key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("settings: encode %q: %w", key, err)
	}
	if _, ok := d.vals[key]; !ok {
		d.keys = append(d.keys, key)
	}
	d.vals[key] = raw
	return nil
}

// Delete removes key.
func (d *Document) Delete(key string) {
	if _, ok := d.vals[key]; !ok {
		return
	}
	delete(d.vals, key)
	for i, k := range d.keys {
		if k == key {
			d.keys = append(d.keys[:i], d.keys[i+1:]...)
			break
		}
	}
}

// Object returns the object stored under key as a Document (empty when the
// key is absent); it is an error when the value is not an object.
func (d *Document) Object(key string) (*Document, error) {
	raw, ok := d.vals[key]
	if !ok {
		return &Document{vals: map[string]json.RawMessage{}}, nil
	}
	sub, err := ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", key, err)
	}
	return sub, nil
}

// Strings returns the array of strings stored under key (nil when absent).
func (d *Document) Strings(key string) ([]string, error) {
	raw, ok := d.vals[key]
	if !ok {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%q must be an array of strings", key)
	}
	return out, nil
}

// MarshalJSON encodes the object with its keys in order.
func (d *Document) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range d.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(d.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Edit applies fn to the settings file at path and writes the result
// atomically (a temporary file renamed over it), holding path+".lock" so
// concurrent Cohort processes do not lose each other's changes. A missing
// file (and its directory) is created. A file that does not parse is left
// alone and the error names its line and column. ctx bounds the wait for
// the lock.
func Edit(ctx context.Context, path string, fn func(d *Document) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("settings: create directory for %s: %w", path, err)
	}
	lock := flock.New(path + ".lock")
	ok, err := lock.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("settings: lock %s: %w", path, cmpErr(err, ctx.Err()))
	}
	defer lock.Close()

	mode := fs.FileMode(0o644)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return fmt.Errorf("settings: read %s: %w", path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	doc, err := ParseDocument(data)
	if err != nil {
		return fmt.Errorf("settings: %s:%w; fix the file by hand, Cohort will not overwrite it", path, err)
	}
	if err := fn(doc); err != nil {
		return fmt.Errorf("settings: edit %s: %w", path, err)
	}
	raw, _ := doc.MarshalJSON()
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return fmt.Errorf("settings: encode %s: %w", path, err)
	}
	out.WriteByte('\n')
	if err := atomicfile.Write(path, out.Bytes(), mode); err != nil {
		return fmt.Errorf("settings: write %s: %w", path, err)
	}
	return nil
}

func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return errors.New("lock not acquired")
}
