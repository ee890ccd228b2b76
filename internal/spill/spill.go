// Package spill is a first-in first-out queue whose producers never wait
// and whose memory is bounded: past a number of items held in memory, new
// items go to a file and are read back, in order, as the consumer catches
// up. The session's event stream uses it, so that a slow consumer neither
// stalls an agent nor makes the session's memory grow without bound.
//
// Items of the same key (a task's progress) may be coalesced while they
// wait in memory: a newer one replaces the older one in place. Spilled
// items are never coalesced, and nothing is ever dropped.
package spill

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"io"
	"os"
	"sync"
)

// ErrClosed is returned by Pop once the queue is closed and empty.
var ErrClosed = errors.New("spill: queue closed")

// Config configures a Queue.
type Config[T any] struct {
	// Memory is how many items are held in memory before new ones are
	// spilled (default 1024).
	Memory int
	// Dir is where the spill file is made (default os.TempDir()).
	Dir string
	// Key, when set, names an item that a newer item of the same key may
	// replace while both wait in memory; "" means the item is never
	// coalesced.
	Key func(T) string
}

// Queue is a FIFO of T. Push never blocks; Pop waits. Safe for concurrent
// use by any number of producers and one consumer. T must be encodable by
// encoding/gob (its spilled form).
type Queue[T any] struct {
	cfg Config[T]

	mu     sync.Mutex
	mem    []T
	keys   map[string]int // key → index in mem of the waiting item
	ready  chan struct{}  // closed while something waits, or once closed
	closed bool
	err    error // a spill failure: reported by Pop after what it could read

	file    *os.File // the spill file, while items are spilled
	enc     *gob.Encoder
	w       *bufio.Writer
	dec     *gob.Decoder
	spilled int // items written to the file and not yet read
}

// New returns an empty Queue.
func New[T any](cfg Config[T]) *Queue[T] {
	if cfg.Memory <= 0 {
		cfg.Memory = 1024
	}
	return &Queue[T]{cfg: cfg, keys: map[string]int{}, ready: make(chan struct{})}
}

// Push adds v at the end. It never waits: when the memory is full v goes
// to the spill file (whose failure Pop reports).
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if q.spilled == 0 && q.err == nil {
		if key := q.key(v); key != "" {
			if i, ok := q.keys[key]; ok {
				q.mem[i] = v
				return
			}
			q.keys[key] = len(q.mem)
		}
		if len(q.mem) < q.cfg.Memory {
			q.mem = append(q.mem, v)
			q.wake()
			return
		}
		if key := q.key(v); key != "" {
			delete(q.keys, key)
		}
	}
	if err := q.spill(v); err != nil && q.err == nil {
		q.err = err
	}
	q.wake()
}

func (q *Queue[T]) key(v T) string {
	if q.cfg.Key == nil {
		return ""
	}
	return q.cfg.Key(v)
}

// spill writes v to the spill file, making it on first use.
func (q *Queue[T]) spill(v T) error {
	if q.file == nil {
		f, err := os.CreateTemp(q.cfg.Dir, "cohort-events-*.spill")
		if err != nil {
			return err
		}
		os.Remove(f.Name()) // the open file is all we need; nothing is left behind
		q.file, q.w = f, bufio.NewWriter(f)
		q.enc = gob.NewEncoder(q.w)
		q.dec = gob.NewDecoder(bufio.NewReader(&readerAt{f: f}))
	}
	if err := q.enc.Encode(&v); err != nil {
		return err
	}
	q.spilled++
	return nil
}

// wake marks the queue ready; called with q.mu held.
func (q *Queue[T]) wake() {
	select {
	case <-q.ready:
	default:
		close(q.ready)
	}
}

// Pop removes and returns the first item, waiting for one until ctx ends.
// After Close it returns what is left, then ErrClosed.
func (q *Queue[T]) Pop(ctx context.Context) (T, error) {
	var zero T
	for {
		q.mu.Lock()
		if len(q.mem) > 0 {
			v := q.mem[0]
			var z T
			q.mem[0] = z
			q.mem = q.mem[1:]
			q.shiftKeys(v)
			q.idle()
			q.mu.Unlock()
			return v, nil
		}
		if q.spilled > 0 {
			v, err := q.readSpilled()
			q.idle()
			q.mu.Unlock()
			return v, err
		}
		if q.err != nil {
			err := q.err
			q.mu.Unlock()
			return zero, err
		}
		if q.closed {
			q.mu.Unlock()
			return zero, ErrClosed
		}
		ready := q.ready
		q.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// shiftKeys updates the key index after the head item was removed.
func (q *Queue[T]) shiftKeys(head T) {
	if key := q.key(head); key != "" && q.keys[key] == 0 {
		delete(q.keys, key)
	}
	for k, i := range q.keys {
		q.keys[k] = i - 1
	}
}

// readSpilled reads the next spilled item; once the file is drained it is
// dropped, and items go to memory again. Called with q.mu held.
func (q *Queue[T]) readSpilled() (T, error) {
	var v T
	if err := q.w.Flush(); err != nil {
		q.err = err
		return v, err
	}
	err := q.dec.Decode(&v)
	q.spilled--
	if err != nil {
		q.err = err
		q.spilled = 0
	}
	if q.spilled == 0 {
		q.file.Close()
		q.file, q.w, q.enc, q.dec = nil, nil, nil, nil
	}
	return v, err
}

// idle resets readiness when nothing waits; called with q.mu held.
func (q *Queue[T]) idle() {
	if len(q.mem) == 0 && q.spilled == 0 && q.err == nil && !q.closed {
		q.ready = make(chan struct{})
	}
}

// Len returns how many items wait (in memory and spilled).
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.mem) + q.spilled
}

// Close ends the queue: later pushes are dropped, and Pop returns what is
// left, then ErrClosed. Safe to call more than once.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.wake()
}

// Discard closes the queue and drops what waits (the consumer is gone).
func (q *Queue[T]) Discard() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.mem, q.keys, q.spilled = nil, map[string]int{}, 0
	if q.file != nil {
		q.file.Close()
		q.file, q.w, q.enc, q.dec = nil, nil, nil, nil
	}
	q.wake()
}

// readerAt reads a file from the start through ReadAt, so that the writer's
// offset (the end, where spilled items are appended) is not disturbed.
type readerAt struct {
	f   *os.File
	off int64
}

func (r *readerAt) Read(p []byte) (int, error) {
	n, err := r.f.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}
