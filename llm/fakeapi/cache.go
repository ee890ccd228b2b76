package fakeapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"sync"
	"time"
)

// CacheConfig configures the prompt-cache simulator. Zero fields take the
// defaults documented on each.
type CacheConfig struct {
	// Disabled turns the simulator off: every input token is reported as
	// input_tokens and nothing is written.
	Disabled bool
	// MinTokens is the shortest cacheable prefix (default 1024 tokens). A
	// breakpoint whose prefix is shorter is neither written nor read.
	MinTokens int
	// TTL is the lifetime of a "5m" entry (default 5 minutes), counted from
	// its last use: a hit refreshes it. "1h" entries live an hour.
	TTL time.Duration
	// LookBack is how many blocks before each breakpoint a read may look for
	// an earlier entry (default 20).
	LookBack int
}

func (c CacheConfig) withDefaults() CacheConfig {
	if c.MinTokens <= 0 {
		c.MinTokens = 1024
	}
	if c.TTL <= 0 {
		c.TTL = 5 * time.Minute
	}
	if c.LookBack <= 0 {
		c.LookBack = 20
	}
	return c
}

// Usage is the token accounting the server reported for one response, in the
// API's terms: InputTokens excludes both cached parts.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// total is the request's whole input: uncached, written and read.
func (u Usage) total() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// CacheStats summarises what the simulator has done since the server started.
type CacheStats struct {
	Entries        int   // live (unexpired) entries now
	Hits           int64 // responses that read a cached prefix
	Misses         int64 // responses with a breakpoint that read nothing
	Writes         int64 // entries written or rewritten
	ReadTokens     int64 // sum of cache_read_input_tokens
	CreationTokens int64 // sum of cache_creation_input_tokens
}

// cache is the prompt-cache simulator. Its mutex is held only for map
// lookups and updates, never while a response streams.
type cache struct {
	cfg  CacheConfig
	now  func() time.Time
	memo *memo // canonical digests of blocks seen before

	mu        sync.Mutex
	entries   map[[32]byte]cacheEntry
	stats     CacheStats
	nextSweep int
}

type cacheEntry struct {
	tokens  int
	ttl     time.Duration
	expires time.Time
}

// point is one block of the rendered prefix: the hash of everything up to and
// including it, and the prefix's size in tokens.
type point struct {
	key    [32]byte
	tokens int
	bp     bool          // the block carries cache_control
	ttl    time.Duration // the breakpoint's lifetime
}

// cachePlan is what a request will read and write; commit applies it.
type cachePlan struct {
	readKey [32]byte
	hasRead bool
	writes  []point
	usage   Usage
	by1h    int  // creation tokens that belong to "1h" breakpoints
	anyBP   bool // the request has at least one breakpoint
}

func newCache(cfg CacheConfig, now func() time.Time) *cache {
	return &cache{cfg: cfg.withDefaults(), now: now, memo: newMemo(memoMaxBytes), entries: map[[32]byte]cacheEntry{}, nextSweep: 256}
}

// plan computes the request's usage against the entries that are readable
// now. It changes nothing: entries are refreshed and written by commit, once
// the response has begun, so concurrent requests that have not yet started
// streaming never see each other's writes.
func (c *cache) plan(req *Request) cachePlan {
	pts := c.render(req)
	total := 0
	if len(pts) > 0 {
		total = pts[len(pts)-1].tokens
	}
	if c.cfg.Disabled {
		return cachePlan{usage: Usage{InputTokens: total}}
	}
	readPos := -1
	c.mu.Lock()
	now := c.now()
	for i, p := range pts {
		if !p.bp {
			continue
		}
		from := i
		if req.autoCache && i == len(pts)-1 {
			// A prefix cache computes at least the last part of the prompt
			// (the model needs logits for it), so it never reads it all.
			from = i - 1
		}
		for j := from; j >= 0 && j >= i-c.cfg.LookBack && j > readPos; j-- {
			e, ok := c.entries[pts[j].key]
			if ok && now.Before(e.expires) && e.tokens >= c.cfg.MinTokens {
				readPos = j
				break
			}
		}
	}
	c.mu.Unlock()

	var pl cachePlan
	read := 0
	if readPos >= 0 {
		pl.readKey, pl.hasRead, read = pts[readPos].key, true, pts[readPos].tokens
	}
	prev := read
	for i, p := range pts {
		pl.anyBP = pl.anyBP || p.bp
		if p.bp && i > readPos && p.tokens >= c.cfg.MinTokens {
			pl.writes = append(pl.writes, p)
			if p.ttl == time.Hour {
				pl.by1h += p.tokens - prev
			}
			prev = p.tokens
		}
	}
	creation := prev - read
	pl.usage = Usage{InputTokens: total - read - creation, CacheCreationInputTokens: creation, CacheReadInputTokens: read}
	return pl
}

// commit refreshes the entry the plan read and writes its new entries.
func (c *cache) commit(pl cachePlan) {
	if c.cfg.Disabled {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if pl.hasRead {
		if e, ok := c.entries[pl.readKey]; ok && now.Before(e.expires) {
			e.expires = now.Add(e.ttl)
			c.entries[pl.readKey] = e
		}
		c.stats.Hits++
	} else if pl.anyBP {
		c.stats.Misses++
	}
	for _, p := range pl.writes {
		c.entries[p.key] = cacheEntry{tokens: p.tokens, ttl: p.ttl, expires: now.Add(p.ttl)}
		c.stats.Writes++
	}
	c.stats.ReadTokens += int64(pl.usage.CacheReadInputTokens)
	c.stats.CreationTokens += int64(pl.usage.CacheCreationInputTokens)
	if len(c.entries) >= c.nextSweep {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		c.nextSweep = 2*len(c.entries) + 256
	}
}

func (c *cache) snapshot() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	now := c.now()
	for _, e := range c.entries {
		if now.Before(e.expires) {
			st.Entries++
		}
	}
	return st
}

// tokens returns the request's input size in tokens, cached or not.
func (c *cache) tokens(req *Request) int {
	pts := c.render(req)
	if len(pts) == 0 {
		return 0
	}
	return pts[len(pts)-1].tokens
}

// render lays the request out in the API's cache order — tools, then system,
// then every message block — and hashes the prefix at each block. A tool
// with defer_loading is left out; a tool_reference in a tool_result counts
// its tool's definition just before that block, where the API expands it. The hash
// starts from the model, covers the digest of each block's canonical JSON
// without its cache_control (moving a marker does not change content), and
// the role and message index of message blocks. Tokens are cumulative
// bytes/4 of the canonical JSON.
func (c *cache) render(req *Request) []point {
	n := len(req.Tools) + len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	pts := make([]point, 0, n)
	prev := sha256.Sum256([]byte("model\x00" + req.Model))
	size := 0
	buf := make([]byte, 0, 32+16+32+16)
	add := func(tag string, index int, canon canonSum, cc json.RawMessage) {
		buf = append(buf[:0], prev[:]...)
		buf = append(buf, tag...)
		buf = binary.BigEndian.AppendUint64(buf, uint64(index))
		buf = binary.BigEndian.AppendUint64(buf, uint64(canon.n))
		buf = append(buf, canon.sum[:]...)
		prev = sha256.Sum256(buf)
		size += canon.n
		p := point{key: prev, tokens: size / 4}
		if req.autoCache {
			p.bp, p.ttl = true, c.cfg.TTL
		} else if present(cc) {
			p.bp, p.ttl = true, c.cfg.TTL
			if cc, _ := parseCacheControl(cc, ""); cc.TTL == "1h" {
				p.ttl = time.Hour
			}
		}
		pts = append(pts, p)
	}
	for i, t := range req.Tools {
		if t.DeferLoading {
			continue // not in the prompt until a tool_reference loads it
		}
		add("tool", i, c.memo.canonical(t.raw, t), t.CacheControl)
	}
	for i, b := range req.System {
		add("system", i, c.memo.canonical(b.raw, b), b.CacheControl)
	}
	for i, m := range req.Messages {
		for _, b := range m.Content {
			cc := b.CacheControl
			for _, inner := range b.Content {
				if present(inner.CacheControl) && !present(cc) {
					cc = inner.CacheControl
				}
				if b.Type == "tool_result" && inner.Type == "tool_reference" {
					// The loaded definition is read here, in the
					// conversation, not in the tools' prefix.
					if t := req.tool(inner.ToolName); t != nil {
						add("loaded", i, c.memo.canonical(t.raw, t), nil)
					}
				}
			}
			add(m.Role, i, c.memo.canonical(b.raw, b), cc)
		}
	}
	if present(req.CacheControl) && len(req.Messages) > 0 && len(pts) > 0 && !pts[len(pts)-1].bp {
		// Automatic caching: the top-level marker applies to the last block.
		last := &pts[len(pts)-1]
		last.bp, last.ttl = true, c.cfg.TTL
		if cc, _ := parseCacheControl(req.CacheControl, ""); cc.TTL == "1h" {
			last.ttl = time.Hour
		}
	}
	return pts
}

// canonical returns the block's JSON with cache_control removed at the top
// level and from nested content blocks, keys sorted, numbers kept verbatim.
// v is marshalled when raw is nil (a block built in Go, not decoded).
func canonical(raw json.RawMessage, v any) []byte {
	if raw == nil {
		raw, _ = json.Marshal(v)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return raw
	}
	delete(obj, "cache_control")
	if content, ok := obj["content"].([]any); ok {
		for _, c := range content {
			if m, ok := c.(map[string]any); ok {
				delete(m, "cache_control")
			}
		}
	}
	out, err := marshalNoEscape(obj)
	if err != nil {
		return raw
	}
	return out
}

// marshalNoEscape encodes v as the API does, leaving <, > and & literal.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
