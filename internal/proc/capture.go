package proc

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// Capture is an io.Writer that keeps the first and last bytes of what is
// written to it, up to a limit, and counts the rest. Huge outputs keep
// their beginning (usually the command's context) and their end (usually the
// error or summary). Safe for concurrent use.
type Capture struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // the last bytes written after head filled, up to tailCap
	total   int64
}

// NewCapture returns a Capture that keeps at most limit bytes: half from the
// start, half from the end. A limit below 2 keeps nothing.
func NewCapture(limit int) *Capture {
	limit = max(limit, 0)
	return &Capture{headCap: limit / 2, tailCap: limit - limit/2}
}

// Write records p. It never fails.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || c.tailCap == 0 {
		return n, nil
	}
	if len(p) >= c.tailCap {
		c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
		return n, nil
	}
	if over := len(c.tail) + len(p) - c.tailCap; over > 0 {
		c.tail = append(c.tail[:0], c.tail[over:]...)
	}
	c.tail = append(c.tail, p...)
	return n, nil
}

// Total returns how many bytes were written.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Dropped returns how many written bytes are not kept.
func (c *Capture) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == int64(len(c.head)+len(c.tail)) {
		return 0
	}
	return c.total - int64(len(trimIncompleteEnd(c.head))+len(trimIncompleteStart(c.tail)))
}

// String returns the kept output. When bytes were dropped, a line between
// head and tail says how many; the cut never splits a UTF-8 character.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total == int64(len(c.head)+len(c.tail)) {
		return string(c.head) + string(c.tail)
	}
	head := trimIncompleteEnd(c.head)
	tail := trimIncompleteStart(c.tail)
	dropped := c.total - int64(len(head)+len(tail))
	return fmt.Sprintf("%s\n\n[… %d bytes of output omitted …]\n\n%s", head, dropped, tail)
}

// trimIncompleteEnd drops a UTF-8 sequence cut off at the end of b.
func trimIncompleteEnd(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		r := b[len(b)-i]
		if r < utf8.RuneSelf {
			return b // ASCII: nothing cut
		}
		if utf8.RuneStart(r) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// trimIncompleteStart drops continuation bytes at the start of b.
func trimIncompleteStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
