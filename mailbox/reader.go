package mailbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/gofrs/flock"
)

// State is where a message stands in its recipient's handling.
type State string

// Message states: pending (not yet returned by the Reader), processing
// (returned, not yet acknowledged), processed (acknowledged).
const (
	StatePending    State = "pending"
	StateProcessing State = "processing"
	StateProcessed  State = "processed"
)

// Reader consumes one agent's inbox. At most one Reader per inbox is live at
// a time, across all processes (a second gets ErrReaderBusy). Its methods
// are safe for concurrent use; Receive is meant for one goroutine at a time.
//
// Delivery is at-least-once across restarts and exactly-once per id within
// the dedupe window: Read and Receive return each new message once; Ack
// makes its handling durable; a Reader opened after a crash returns the
// unacknowledged messages again and drops ids it has acknowledged.
type Reader struct {
	d          *Dir
	agent      string
	path       string
	cursorPath string
	rlock      *flock.Flock

	mu       sync.Mutex
	closed   bool
	watcher  *Watcher
	file     fileID // identity of the inbox file the offsets below refer to
	acked    int64  // end of the fully acknowledged prefix (the durable cursor)
	ackLine  int    // lines in that prefix
	readOff  int64  // end of the lines parsed so far
	readLine int
	// inflight holds an entry per line in [acked, readOff), in file order.
	inflight   []*entry
	processing map[string]*entry // returned, not acknowledged
	// ahead holds ids acknowledged past acked, each with the line whose
	// passing releases it (nil: that line has not been re-read yet).
	ahead  map[string]*entry
	recent *ring // recently acknowledged ids
}

// entry is one parsed line of the inbox past the cursor.
type entry struct {
	id        string // "" for lines without a valid message
	end       int64  // offset just past the line
	line      int    // 1-based line number
	done      bool   // needs no acknowledgement (acked, skipped or duplicate)
	delivered bool   // returned to the consumer
	live      bool   // still in inflight (offsets valid)
}

// OpenReader opens agent's inbox for consumption, resuming at its cursor.
func (d *Dir) OpenReader(agent string) (*Reader, error) {
	if err := ValidateName(agent); err != nil {
		return nil, fmt.Errorf("mailbox open reader: %w", err)
	}
	ok, err := d.Registered(agent)
	if err != nil {
		return nil, fmt.Errorf("mailbox open reader %s: %w", agent, err)
	}
	if !ok {
		return nil, fmt.Errorf("mailbox open reader %s: %w", agent, ErrUnknownRecipient)
	}
	rl, held, err := tryLockPath(d.readerLock(agent))
	if err != nil {
		return nil, fmt.Errorf("mailbox open reader %s: %w", agent, err)
	}
	if held {
		return nil, fmt.Errorf("mailbox open reader %s: %w (close the other reader or stop the process that runs %s)", agent, ErrReaderBusy, agent)
	}
	r := &Reader{
		d: d, agent: agent, rlock: rl,
		path: d.inboxPath(agent), cursorPath: d.cursorPath(agent),
		processing: map[string]*entry{}, ahead: map[string]*entry{},
	}
	if err := r.load(); err != nil {
		rl.Unlock()
		return nil, fmt.Errorf("mailbox open reader %s: %w", agent, err)
	}
	return r, nil
}

// load restores the cursor and decides where reading resumes.
func (r *Reader) load() error {
	removeStaleTemps(r.d.cfg.Path, r.agent)
	c, ok, err := loadCursor(r.cursorPath)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(r.path, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrUnknownRecipient
	}
	if err != nil {
		return err
	}
	defer f.Close()
	id, size, err := statFile(f)
	if err != nil {
		return err
	}
	pos := position{File: id}
	switch {
	case !ok:
	case c.File == id:
		pos = c.position
	case c.Prev != nil && c.Prev.File == id:
		pos = *c.Prev
		r.report(0, "a compaction was interrupted; resuming at the position it started from")
	default:
		r.report(0, "inbox is not the file the cursor refers to (replaced outside a compaction?); re-reading it from the start, already-acknowledged ids are still dropped")
	}
	if pos.Offset > size {
		r.report(0, fmt.Sprintf("cursor offset %d is past the end of the inbox (%d bytes); re-reading it from the start", pos.Offset, size))
		pos = position{File: id}
	}
	r.file, r.acked, r.ackLine = pos.File, pos.Offset, pos.Line
	r.readOff, r.readLine = pos.Offset, pos.Line
	r.recent = newRing(r.d.cfg.DedupeWindow, c.Recent)
	for _, id := range c.Ahead {
		r.ahead[id] = nil
	}
	return nil
}

// Agent returns the name of the inbox's owner.
func (r *Reader) Agent() string { return r.agent }

// Read returns the messages that arrived since the last Read, in inbox
// order, without waiting. Every returned message is processing until Ack.
func (r *Reader) Read(ctx context.Context) ([]Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	msgs, err := r.readLocked()
	if err != nil {
		return msgs, fmt.Errorf("mailbox read %s: %w", r.agent, err)
	}
	return msgs, nil
}

func (r *Reader) readLocked() ([]Message, error) {
	f, err := os.OpenFile(r.path, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrUnknownRecipient
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	id, size, err := statFile(f)
	if err != nil {
		return nil, err
	}
	if id != r.file {
		r.reset(id, "inbox was replaced by something other than this reader's compaction; re-reading it from the start, already-acknowledged ids are still dropped")
	} else if size < r.readOff {
		r.reset(id, fmt.Sprintf("inbox shrank to %d bytes, below the read position %d; re-reading it from the start", size, r.readOff))
	}
	var out []Message
	var readErr error
	if size > r.readOff {
		out, readErr = r.scan(io.NewSectionReader(f, r.readOff, size-r.readOff))
	}
	if r.popDone() && len(out) == 0 {
		if err := r.persist(); err != nil {
			return nil, err
		}
	}
	if readErr != nil && len(out) == 0 {
		return nil, readErr
	}
	return out, nil
}

// scan parses the complete lines of src, which starts at readOff, and
// returns the messages to deliver. It stops before a final line without a
// newline: a writer may still be writing it.
func (r *Reader) scan(src io.Reader) ([]Message, error) {
	br := bufio.NewReaderSize(src, 64<<10)
	var out []Message
	for {
		line, n, complete, tooLong, err := nextLine(br, r.d.cfg.MaxMessageBytes)
		if err != nil {
			return out, err
		}
		if !complete {
			return out, nil
		}
		r.readLine++
		r.readOff += n
		e := &entry{end: r.readOff, line: r.readLine, live: true}
		r.inflight = append(r.inflight, e)
		if m, ok := r.classify(line, tooLong, e); ok {
			out = append(out, m)
		}
	}
}

// classify decides what one complete line is: a message to deliver, a
// duplicate to drop silently, or a bad line to skip and report.
func (r *Reader) classify(line []byte, tooLong bool, e *entry) (Message, bool) {
	e.done = true
	if tooLong {
		r.report(e.line, fmt.Sprintf("line is longer than %d bytes; skipped", r.d.cfg.MaxMessageBytes))
		return Message{}, false
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return Message{}, false
	}
	m, err := ParseLine(line)
	if err != nil {
		r.report(e.line, fmt.Sprintf("unreadable message skipped: %v", err))
		return Message{}, false
	}
	if m.To != r.agent {
		r.report(e.line, fmt.Sprintf("message %s is addressed to %q, not %q; skipped", m.ID, m.To, r.agent))
		return Message{}, false
	}
	e.id = m.ID
	if pe, ok := r.processing[m.ID]; ok {
		if !pe.live {
			// The consumer holds this message, but the line it came from was
			// lost to a reset: this copy now stands for it until Ack.
			e.done, e.delivered = false, true
			r.processing[m.ID] = e
		}
		return Message{}, false
	}
	if owner, ok := r.ahead[m.ID]; ok {
		if owner == nil {
			r.ahead[m.ID] = e
		}
		return Message{}, false
	}
	if r.recent.has(m.ID) {
		return Message{}, false
	}
	e.done, e.delivered = false, true
	r.processing[m.ID] = e
	return m, true
}

// nextLine reads one line including its '\n'. complete is false when the
// input ends before a newline. A line longer than max bytes is consumed (n
// counts it) but not returned, and tooLong is set.
func nextLine(br *bufio.Reader, max int) (line []byte, n int64, complete, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			return line, n, true, tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil, n, false, false, nil
		default:
			return nil, n, false, false, err
		}
	}
}

// reset starts reading the inbox (now with identity id) from the start after
// an inconsistency, keeping what is known about acknowledged and processing
// ids so that nothing is delivered twice.
func (r *Reader) reset(id fileID, reason string) {
	r.report(0, reason)
	for _, e := range r.inflight {
		e.live = false
	}
	for k := range r.ahead {
		r.ahead[k] = nil
	}
	r.inflight = nil
	r.file = id
	r.acked, r.ackLine, r.readOff, r.readLine = 0, 0, 0, 0
}

// popDone advances the acknowledged prefix over finished lines and reports
// whether it moved.
func (r *Reader) popDone() bool {
	i := 0
	for i < len(r.inflight) && r.inflight[i].done {
		e := r.inflight[i]
		r.acked, r.ackLine = e.end, e.line
		if owner, ok := r.ahead[e.id]; ok && owner == e {
			delete(r.ahead, e.id)
		}
		e.live = false
		i++
	}
	if i > 0 {
		r.inflight = append(r.inflight[:0], r.inflight[i:]...)
	}
	return i > 0
}

// Ack marks messages as handled and makes that durable before returning.
// Acknowledging an id twice is harmless; an id this Reader never returned
// gives ErrNotDelivered (after the known ids are acknowledged).
//
// Ack may compact the inbox (see maybeCompact); a failed compaction is
// reported through Config.OnProblem and retried by a later Ack.
func (r *Reader) Ack(ctx context.Context, ids ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	var unknown []string
	changed := false
	for _, id := range ids {
		e, ok := r.processing[id]
		if !ok {
			if _, acked := r.ahead[id]; !acked && !r.recent.has(id) {
				unknown = append(unknown, clip.String(id, 40))
			}
			continue
		}
		delete(r.processing, id)
		e.done = true
		if e.live {
			r.ahead[id] = e
		}
		r.recent.add(id)
		changed = true
	}
	if changed {
		r.popDone()
		if err := r.persist(); err != nil {
			return fmt.Errorf("mailbox ack %s: %w", r.agent, err)
		}
		r.maybeCompact(ctx)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("mailbox ack %s: %w: %s", r.agent, ErrNotDelivered, strings.Join(unknown, ", "))
	}
	return nil
}

// State reports where the message with id stands for this Reader. Ids it
// has not returned yet, or acknowledged too long ago to remember, are
// pending.
func (r *Reader) State(id string) State {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.processing[id]; ok {
		return StateProcessing
	}
	if _, ok := r.ahead[id]; ok || r.recent.has(id) {
		return StateProcessed
	}
	return StatePending
}

// persist writes the cursor. The caller holds r.mu.
func (r *Reader) persist() error {
	return saveCursor(r.cursorPath, r.cursor())
}

func (r *Reader) cursor() cursorFile {
	c := cursorFile{
		position: position{File: r.file, Offset: r.acked, Line: r.ackLine},
		Recent:   r.recent.list(),
	}
	for id := range r.ahead {
		c.Ahead = append(c.Ahead, id)
	}
	slices.Sort(c.Ahead)
	return c
}

func (r *Reader) report(line int, reason string) {
	r.d.cfg.OnProblem(Problem{Agent: r.agent, Path: r.path, Line: line, Reason: reason})
}

// Receive returns the next messages, waiting until at least one arrives, ctx
// ends (its error) or the Reader is closed (ErrClosed).
func (r *Reader) Receive(ctx context.Context) ([]Message, error) {
	w, err := r.ensureWatcher()
	if err != nil {
		return nil, err
	}
	for {
		msgs, err := r.Read(ctx)
		if err != nil || len(msgs) > 0 {
			return msgs, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case _, ok := <-w.C():
			if !ok {
				return nil, ErrClosed
			}
		}
	}
}

func (r *Reader) ensureWatcher() (*Watcher, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.watcher == nil {
		// The Reader owns this watcher; Close stops it.
		w, err := r.d.Watch(context.Background(), r.agent)
		if err != nil {
			return nil, fmt.Errorf("mailbox receive %s: %w", r.agent, err)
		}
		r.watcher = w
	}
	return r.watcher, nil
}

// Close stops the Reader's watcher, waits for it and releases the inbox for
// another Reader. Unacknowledged messages will be delivered again. Close is
// idempotent.
func (r *Reader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	w := r.watcher
	r.mu.Unlock()
	if w != nil {
		w.Close()
	}
	return r.rlock.Unlock()
}
