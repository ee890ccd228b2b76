package fakeapi

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// memo remembers work the fake has already done for the exact same bytes.
// A client re-sends its whole conversation on every turn, so without it the
// fake decodes every earlier message and re-renders every cached block on
// each request: a conversation of n turns costs O(n²), and the fake's CPU
// (on the same cores as the client under test) would dominate benchmarks
// with many agents. Entries are keyed by the raw JSON, so a message whose
// bytes change in any way (a cache marker moved onto it, say) is simply
// decoded anew. The values are shared between requests; like every Request,
// they are read-only.
//
// The memo is bounded by the bytes of its keys; when full it starts over,
// which costs only the re-decoding.
type memo struct {
	mu     sync.Mutex
	msgs   map[string]Message
	system map[string][]Block
	tools  map[string]Tool
	canon  map[string]canonSum
	bytes  int
	max    int
}

// canonSum is the digest of a block's canonical JSON and that JSON's length
// (the simulator counts tokens from it).
type canonSum struct {
	sum [32]byte
	n   int
}

const memoMaxBytes = 64 << 20

func newMemo(max int) *memo {
	m := &memo{max: max}
	m.reset()
	return m
}

func (m *memo) reset() {
	m.msgs, m.system, m.tools, m.canon, m.bytes = map[string]Message{}, map[string][]Block{}, map[string]Tool{}, map[string]canonSum{}, 0
}

// admit accounts for a new key of n bytes, starting over when the memo is
// full. It is called with mu held.
func (m *memo) admit(n int) {
	if m.bytes+n > m.max {
		m.reset()
	}
	m.bytes += n
}

// message decodes raw as a Message, or returns the one decoded from the
// same bytes before. A nil memo decodes every time.
func (m *memo) message(raw json.RawMessage) (Message, error) {
	return remembered(m, func(m *memo) map[string]Message { return m.msgs }, raw, decodeMessage)
}

// systemBlocks decodes a request's system field, or returns the blocks
// decoded from the same bytes before (an agent sends one system prompt on
// every turn).
func (m *memo) systemBlocks(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	return remembered(m, func(m *memo) map[string][]Block { return m.system }, raw, decodeSystem)
}

// tool decodes raw as a Tool, or returns the one decoded from the same
// bytes before.
func (m *memo) tool(raw json.RawMessage) (Tool, error) {
	return remembered(m, func(m *memo) map[string]Tool { return m.tools }, raw, func(raw json.RawMessage) (Tool, error) {
		var t Tool
		err := json.Unmarshal(raw, &t)
		return t, err
	})
}

// remembered decodes raw into a T with decode, through the memo table that
// table picks (picked again after admit, which may start the memo over).
func remembered[T any](m *memo, table func(*memo) map[string]T, raw json.RawMessage, decode func(json.RawMessage) (T, error)) (T, error) {
	if m != nil {
		m.mu.Lock()
		v, ok := table(m)[string(raw)]
		m.mu.Unlock()
		if ok {
			return v, nil
		}
	}
	v, err := decode(raw)
	if err != nil {
		var zero T
		return zero, err
	}
	if m != nil {
		m.mu.Lock()
		m.admit(len(raw))
		table(m)[string(raw)] = v
		m.mu.Unlock()
	}
	return v, nil
}

// canonical returns the digest of canonical(raw, v), remembered by raw. A
// block built in Go (raw nil) is computed every time.
func (m *memo) canonical(raw json.RawMessage, v any) canonSum {
	if m == nil || raw == nil {
		c := canonical(raw, v)
		return canonSum{sha256.Sum256(c), len(c)}
	}
	m.mu.Lock()
	cs, ok := m.canon[string(raw)]
	m.mu.Unlock()
	if ok {
		return cs
	}
	c := canonical(raw, v)
	cs = canonSum{sha256.Sum256(c), len(c)}
	m.mu.Lock()
	m.admit(len(raw))
	m.canon[string(raw)] = cs
	m.mu.Unlock()
	return cs
}
