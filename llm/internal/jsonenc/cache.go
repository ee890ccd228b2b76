package jsonenc

import (
	"encoding/json"
	"sync"
)

// The stable parts of a request — tool definitions and the system prompt —
// are the same bytes on every request of an agent. A Model keeps their
// encoded forms so that each is validated, compacted and escaped once rather
// than once per request. Every cache is keyed by content, never by the
// caller's slice (which may be edited in place), and bounded.

// Cache holds a Model's caches. The zero value is ready; it is safe for
// concurrent use.
type Cache struct {
	schemas schemaCache
	texts   textCache
}

// Schema returns raw compacted as CompactObject does with the fallback
// {"type":"object"}, from the cache when the same bytes came before. The
// result must not be modified.
func (c *Cache) Schema(raw json.RawMessage) ([]byte, error) { return c.schemas.get(raw) }

// AppendText appends s as AppendString does, from the cache when s is long
// and came before.
func (c *Cache) AppendText(dst []byte, s string) []byte { return c.texts.appendString(dst, s) }

// maxCachedSchemas bounds a schemaCache; past it schemas are compacted on
// every request (a pool that large changes all the time anyway).
const maxCachedSchemas = 1024

// schemaCache keeps the compacted form of tool input schemas, keyed by the
// bytes the caller gave. Safe for concurrent use.
type schemaCache struct {
	mu sync.RWMutex
	m  map[string][]byte // raw schema → compacted form, read-only
}

// get returns the compacted form of raw; the result must not be modified.
func (c *schemaCache) get(raw json.RawMessage) ([]byte, error) {
	c.mu.RLock()
	out, ok := c.m[string(raw)] // no copy of raw for the lookup
	c.mu.RUnlock()
	if ok {
		return out, nil
	}
	out, err := CompactObject(raw, `{"type":"object"}`)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string][]byte)
	}
	if len(c.m) < maxCachedSchemas {
		c.m[string(raw)] = out
	}
	c.mu.Unlock()
	return out, nil
}

// Bounds of a textCache. Texts shorter than minCachedText are escaped every
// time: looking them up costs about as much.
const (
	minCachedText   = 256
	maxCachedTexts  = 1024
	maxCachedTextsB = 16 << 20
)

// textCache keeps long strings escaped as JSON: the system prompt and tool
// descriptions. A lookup hashes the string, which is several times faster
// than escaping it, and compares it by pointer when it is the caller's same
// string, as it is turn after turn. Safe for concurrent use.
type textCache struct {
	mu    sync.RWMutex
	m     map[string][]byte
	bytes int
}

// appendString appends s as AppendString does.
func (c *textCache) appendString(dst []byte, s string) []byte {
	if len(s) < minCachedText {
		return AppendString(dst, s)
	}
	c.mu.RLock()
	out, ok := c.m[s]
	c.mu.RUnlock()
	if ok {
		return append(dst, out...)
	}
	start := len(dst)
	dst = AppendString(dst, s)
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string][]byte)
	}
	if n := len(dst) - start; len(c.m) < maxCachedTexts && c.bytes+n <= maxCachedTextsB {
		c.m[s] = append([]byte(nil), dst[start:]...)
		c.bytes += n
	}
	c.mu.Unlock()
	return dst
}
