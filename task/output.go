package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Output defaults.
const (
	DefaultOutputCap    int64 = 5 << 30 // 5 GiB
	DefaultMaxPending         = 1 << 20 // bytes buffered ahead of the disk
	DefaultBlockTimeout       = 2 * time.Second
	DefaultTailLines          = 1000
	DefaultMaxTailLine        = 4096
)

// ErrOutputClosed is returned by writes after Close.
var ErrOutputClosed = errors.New("task output is closed")

// ErrSymlink reports a symbolic link planted where an output file belongs.
var ErrSymlink = errors.New("refusing to follow a symbolic link")

// OutputConfig tunes an Output. Zero fields take the defaults.
type OutputConfig struct {
	// MaxBytes caps the file; past it one truncation note is written and
	// later lines reach only the in-memory tail.
	MaxBytes int64
	// MaxPending bounds the bytes waiting for the disk. A writer that finds
	// the buffer full waits up to BlockTimeout for the disk to catch up and
	// then drops its line; dropped lines are counted and a
	// "[N lines dropped …]" marker takes their place in the file.
	MaxPending   int
	BlockTimeout time.Duration
	// TailLines is how many recent lines Tail can return; each is cut to
	// MaxTailLine bytes so the tail's memory stays bounded.
	TailLines   int
	MaxTailLine int
}

func (c OutputConfig) withDefaults() OutputConfig {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultOutputCap
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.BlockTimeout <= 0 {
		c.BlockTimeout = DefaultBlockTimeout
	}
	if c.TailLines <= 0 {
		c.TailLines = DefaultTailLines
	}
	if c.MaxTailLine <= 0 {
		c.MaxTailLine = DefaultMaxTailLine
	}
	return c
}

// Output is a task's transcript file: lines are appended through a bounded
// buffer that one goroutine drains to disk, and the most recent lines are
// also kept in memory. The draining goroutine exists only while there is
// something to write, so idle tasks cost no goroutine. Safe for concurrent
// use; Close may be called more than once.
type Output struct {
	path   string
	f      *os.File // nil when linked
	cfg    OutputConfig
	linked bool // the file is a transcript someone else writes (linked.go)

	mu       sync.Mutex
	pending  []byte
	spare    []byte
	flushing bool
	space    chan struct{} // closed whenever the drainer takes the pending bytes
	accepted int64         // bytes handed to the file, notes included
	capped   bool
	dropped  int64 // lines dropped since the last marker
	lost     int64 // lines dropped in total
	closed   bool
	werr     error
	tail     []string // ring of the last TailLines lines
	tailHead int      // index of the oldest line once the ring is full

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// CreateOutput creates a new output file at path with mode 0600. The file
// must not exist; a symbolic link at path is refused, never followed.
func CreateOutput(path string, cfg OutputConfig) (*Output, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return nil, openError(path, err, func() (fs.FileInfo, error) { return os.Lstat(path) })
	}
	return newOutput(f, path, cfg)
}

// createOutputIn is CreateOutput relative to an opened directory, so a
// directory swapped for a link after the registry opened it is not followed
// either.
func createOutputIn(root *os.Root, name, path string, cfg OutputConfig) (*Output, error) {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return nil, openError(path, err, func() (fs.FileInfo, error) { return root.Lstat(name) })
	}
	return newOutput(f, path, cfg)
}

func openError(path string, err error, lstat func() (fs.FileInfo, error)) error {
	if fi, lerr := lstat(); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("task output %s: a symbolic link is in the way: %w (remove it if you did not put it there)", path, ErrSymlink)
	}
	return fmt.Errorf("task output %s: %w", path, err)
}

func newOutput(f *os.File, path string, cfg OutputConfig) (*Output, error) {
	// The mode passed to open is filtered by the umask; make it exact.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("task output %s: chmod: %w", path, err)
	}
	cfg = cfg.withDefaults()
	return &Output{path: path, f: f, cfg: cfg, space: make(chan struct{})}, nil
}

// Path returns the file's path.
func (o *Output) Path() string { return o.path }

// WriteJSON appends v as one JSON line.
func (o *Output) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("task output %s: encode line: %w", o.path, err)
	}
	return o.WriteLine(string(b))
}

// WriteLine appends s and a newline. It returns once the line is buffered,
// not when it is on disk; it blocks at most BlockTimeout when the disk falls
// behind, then drops the line (see OutputConfig). It fails only after Close
// or after the file could not be written.
func (o *Output) WriteLine(s string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return ErrOutputClosed
	}
	for line := range strings.SplitSeq(s, "\n") {
		o.pushTail(line)
	}
	if o.linked {
		return nil // the file is the transcript; lines written here stay in memory
	}
	if o.werr != nil {
		return o.werr
	}
	if o.capped {
		return nil
	}
	data := len(s) + 1
	if !o.waitSpaceLocked(data) {
		return o.errAfterWaitLocked()
	}
	if o.capped { // another writer reached the cap while this one waited
		return nil
	}
	marker := ""
	if o.dropped > 0 {
		marker = fmt.Sprintf("[%d lines dropped: the output writer fell behind]", o.dropped)
	}
	if o.accepted+int64(len(marker)+data)+noteReserve > o.cfg.MaxBytes {
		o.capped = true
		o.appendLocked(fmt.Sprintf("[output truncated: the file reached its %d-byte cap; later lines are not saved]", o.cfg.MaxBytes))
		return nil
	}
	if marker != "" {
		o.appendLocked(marker)
		o.dropped = 0
	}
	o.appendLocked(s)
	return nil
}

// noteReserve keeps room under the cap for a drop marker and the
// truncation note.
const noteReserve = 256

// waitSpaceLocked waits, with o.mu held on entry and exit, until data bytes
// fit in the pending buffer. It reports false when the line must be
// dropped (timeout) or the output closed meanwhile.
func (o *Output) waitSpaceLocked(data int) bool {
	var timer *time.Timer
	for len(o.pending) > 0 && len(o.pending)+data > o.cfg.MaxPending {
		if timer == nil {
			timer = time.NewTimer(o.cfg.BlockTimeout)
			defer timer.Stop()
		}
		ch := o.space
		o.mu.Unlock()
		var expired bool
		select {
		case <-ch:
		case <-timer.C:
			expired = true
		}
		o.mu.Lock()
		if o.closed || o.werr != nil {
			return false
		}
		if expired && len(o.pending) > 0 && len(o.pending)+data > o.cfg.MaxPending {
			o.dropped++
			o.lost++
			return false
		}
	}
	return true
}

func (o *Output) errAfterWaitLocked() error {
	switch {
	case o.closed:
		return ErrOutputClosed
	case o.werr != nil:
		return o.werr
	}
	return nil // dropped and counted
}

// appendLocked queues one line for the disk and makes sure a drainer runs.
func (o *Output) appendLocked(line string) {
	o.pending = append(o.pending, line...)
	o.pending = append(o.pending, '\n')
	o.accepted += int64(len(line) + 1)
	if !o.flushing {
		o.flushing = true
		o.wg.Go(o.drain)
	}
}

// drain writes pending bytes until none are left, then exits.
func (o *Output) drain() {
	for {
		o.mu.Lock()
		if len(o.pending) == 0 || o.werr != nil {
			o.pending = o.pending[:0]
			o.flushing = false
			o.mu.Unlock()
			return
		}
		buf := o.pending
		o.pending, o.spare = o.spare[:0], nil
		close(o.space)
		o.space = make(chan struct{})
		o.mu.Unlock()

		_, err := o.f.Write(buf)

		o.mu.Lock()
		if err != nil {
			o.werr = fmt.Errorf("task output %s: write: %w", o.path, err)
		}
		if cap(buf) <= 4*o.cfg.MaxPending {
			o.spare = buf[:0]
		}
		o.mu.Unlock()
	}
}

func (o *Output) pushTail(line string) {
	// Copy so the tail never pins a caller's large backing array.
	line = strings.Clone(cutLine(line, o.cfg.MaxTailLine))
	if len(o.tail) < o.cfg.TailLines {
		o.tail = append(o.tail, line)
		return
	}
	o.tail[o.tailHead] = line
	o.tailHead = (o.tailHead + 1) % len(o.tail)
}

// cutLine shortens line to at most max bytes (on a character boundary),
// marking the cut.
func cutLine(line string, max int) string {
	if len(line) <= max {
		return line
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return line[:cut] + "… [line truncated]"
}

// Tail returns up to n of the most recent lines, oldest first; n ≤ 0 means
// all that are kept.
func (o *Output) Tail(n int) []string {
	if o.linked {
		return o.linkedTail(n)
	}
	return o.memTail(n)
}

// memTail is Tail from the in-memory ring.
func (o *Output) memTail(n int) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	total := len(o.tail)
	if n <= 0 || n > total {
		n = total
	}
	out := make([]string, 0, n)
	for i := total - n; i < total; i++ {
		out = append(out, o.tail[(o.tailHead+i)%total])
	}
	return out
}

// Size returns the bytes accepted for the file so far (notes included).
func (o *Output) Size() int64 {
	if o.linked {
		return o.linkedSize()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.accepted
}

// Dropped returns how many lines never reached the file because the disk
// fell behind.
func (o *Output) Dropped() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lost
}

// Close flushes what is buffered, closes the file and reports the first
// write error. Writers blocked on a full buffer return ErrOutputClosed.
// The in-memory tail stays readable.
func (o *Output) Close() error {
	o.closeOnce.Do(func() {
		o.mu.Lock()
		o.closed = true
		if o.dropped > 0 && !o.capped && o.werr == nil {
			o.appendLocked(fmt.Sprintf("[%d lines dropped: the output writer fell behind]", o.dropped))
			o.dropped = 0
		}
		close(o.space) // wake blocked writers
		o.space = make(chan struct{})
		o.mu.Unlock()
		o.wg.Wait()
		o.mu.Lock()
		werr := o.werr
		o.mu.Unlock()
		if o.f != nil {
			o.closeErr = errors.Join(werr, o.f.Close())
		}
	})
	return o.closeErr
}
