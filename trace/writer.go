package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/llm"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/task"
)

// Defaults for Config's zero values.
const (
	DefaultBufferSize    = 64 << 10
	DefaultFlushInterval = time.Second
)

// pid is the one process of every trace: the session.
const pid = 1

// ErrSymlink reports a symbolic link at the trace path; Create refuses to
// follow it.
var ErrSymlink = errors.New("trace: the path is a symbolic link")

// Config configures a Writer. The zero value is ready to use.
type Config struct {
	// Session is shown in the trace's process name ("cohort <Session>").
	Session string
	// Now is the clock that stamps events; nil means time.Now. Timestamps
	// are relative to the clock's reading when the Writer is created.
	Now func() time.Time
	// BufferSize is how many encoded bytes are held before they are written
	// (default 64 KiB). Events are only ever written whole.
	BufferSize int
	// FlushInterval also writes the buffer when an event arrives this long
	// after the last write (default 1 s, measured on Now); negative writes
	// only when the buffer is full, on Flush and on Close.
	FlushInterval time.Duration
	// Prices, when set, price each model request (args.cost_usd) and sum
	// them per agent on its agent span (cost_usd, with its usage), so a
	// team's bill reads agent by agent.
	Prices llm.PriceTable
}

// Writer writes one run's trace file in Chrome's trace-event format (the
// JSON Array Format, which Perfetto and chrome://tracing open). It turns
// engine and task events into spans as they arrive and writes each span
// once it has ended, so memory holds only open spans and one buffer.
//
// A Writer is safe for concurrent use: Engine and Task may be called from
// any goroutine (they are an engine.Sink and a task OnEvent callback). Both
// return after, at most, one buffered write to the file. After Close they
// do nothing.
type Writer struct {
	mu  sync.Mutex
	cfg Config
	f   *os.File

	start     time.Time
	last      int64     // nanoseconds of the last stamp handed out
	now       time.Time // the clock's reading for the event being handled
	lastWrite time.Time // when the buffer last went to the file
	buf       []byte    // encoded events not yet written
	scratch   bytes.Buffer
	enc       *json.Encoder
	first     bool // no event written yet
	err       error
	closed    bool
	closeErr  error

	nextTID   int
	nextOrder int
	lead      *track
	tracks    []*track          // in creation order
	byAgent   map[string]*track // by engine AgentID
	byCall    map[string]*track // subagent tracks by the tool_use_id that spawned them
	calls     map[string]*track // open tool calls: tool_use_id → calling agent
	tasks     map[string]*taskRef
	pending   map[string]*pendingTask // agent tasks by call id, until their agent's first event
}

// Create creates (or truncates) the trace file at path with mode 0600 and
// writes its header. It refuses a symbolic link at path (ErrSymlink) and
// anything but a regular file.
func Create(path string, cfg Config) (*Writer, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		cfg: cfg, f: f, first: true, last: -1,
		byAgent: map[string]*track{}, byCall: map[string]*track{},
		calls: map[string]*track{}, tasks: map[string]*taskRef{}, pending: map[string]*pendingTask{},
	}
	w.enc = json.NewEncoder(&w.scratch)
	w.enc.SetEscapeHTML(false)
	w.start = cfg.Now()
	w.now, w.lastWrite = w.start, w.start
	name := "cohort"
	if cfg.Session != "" {
		name += " " + cfg.Session
	}
	w.buf = append(w.buf, '[')
	w.meta(0, "process_name", map[string]any{"name": name})
	w.flush()
	if w.err != nil {
		f.Close()
		return nil, w.err
	}
	return w, nil
}

// Engine records one engine event. Its signature is an engine.Sink's.
func (w *Writer) Engine(ev engine.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil {
		return
	}
	w.engineEvent(ev, w.stamp())
	w.maybeFlush()
}

// Task records one task event. Its signature is a task.Config.OnEvent's.
func (w *Writer) Task(ev task.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.err != nil {
		return
	}
	w.taskEvent(ev, w.stamp())
	w.maybeFlush()
}

// Flush writes the buffered events to the file. The file is then a valid
// trace without its closing bracket, which trace viewers accept.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.closeErr
	}
	w.flush()
	return w.err
}

// Close ends every span still open at the current time (marked
// "unfinished": true), writes the closing bracket and closes the file. It
// returns the first write error, if any. Close is idempotent: later calls
// return the first call's result.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.closeErr
	}
	w.closed = true
	if w.err == nil {
		w.closeAll(w.stamp())
		w.buf = append(w.buf, "\n]\n"...)
		w.flush()
	}
	err := w.f.Close()
	if w.err == nil && err != nil {
		w.err = fmt.Errorf("trace: close %s: %w", w.f.Name(), err)
	}
	w.closeErr = w.err
	w.buf, w.tracks, w.byAgent, w.byCall, w.calls, w.tasks, w.pending = nil, nil, nil, nil, nil, nil, nil
	return w.closeErr
}

// stamp reads the clock and returns the event's time in nanoseconds since
// the start, strictly after every earlier stamp. Unique stamps keep spans
// that begin together from tying: viewers order ties by position in the
// file, which for spans written when they end is child first.
func (w *Writer) stamp() int64 {
	w.now = w.cfg.Now()
	ns := w.now.Sub(w.start).Nanoseconds()
	if ns <= w.last {
		ns = w.last + 1
	}
	w.last = ns
	return ns
}

// next returns a stamp one nanosecond after the last, for a second mark
// within one event.
func (w *Writer) next() int64 {
	w.last++
	return w.last
}

// record is one trace event as the file holds it.
type record struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   json.Number    `json:"ts"`
	Dur  json.Number    `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// complete writes a span ("X" event) on tid.
func (w *Writer) complete(tid int, cat, name string, start, end int64, args map[string]any) {
	end = max(end, start)
	w.write(record{Name: name, Cat: cat, Ph: "X", TS: micros(start), Dur: micros(end - start),
		PID: pid, TID: tid, Args: args})
}

// instant writes a thread-scoped instant event on tid.
func (w *Writer) instant(tid int, cat, name string, ts int64, args map[string]any) {
	w.write(record{Name: name, Cat: cat, Ph: "i", TS: micros(ts), PID: pid, TID: tid, S: "t", Args: args})
}

// meta writes a metadata event.
func (w *Writer) meta(tid int, name string, args map[string]any) {
	w.write(record{Name: name, Ph: "M", TS: "0", PID: pid, TID: tid, Args: args})
}

// write encodes r into the buffer. Events are separated by a comma that
// precedes them, so the file ends with a whole event between writes.
func (w *Writer) write(r record) {
	if w.err != nil {
		return
	}
	w.scratch.Reset()
	if err := w.enc.Encode(r); err != nil {
		w.err = fmt.Errorf("trace: encode %s event %q: %w", r.Ph, r.Name, err)
		return
	}
	if w.first {
		w.buf = append(w.buf, '\n')
		w.first = false
	} else {
		w.buf = append(w.buf, ",\n"...)
	}
	w.buf = append(w.buf, bytes.TrimSuffix(w.scratch.Bytes(), []byte("\n"))...)
}

// maybeFlush writes the buffer when it is full or has waited too long.
func (w *Writer) maybeFlush() {
	if len(w.buf) >= w.cfg.BufferSize {
		w.flush()
		return
	}
	if w.cfg.FlushInterval > 0 && len(w.buf) > 0 && w.now.Sub(w.lastWrite) >= w.cfg.FlushInterval {
		w.flush()
	}
}

// flush writes the buffer in one call, so the file only ever ends at an
// event boundary.
func (w *Writer) flush() {
	if w.err != nil || len(w.buf) == 0 {
		return
	}
	if _, err := w.f.Write(w.buf); err != nil {
		w.err = fmt.Errorf("trace: write %s: %w", w.f.Name(), err)
	}
	w.lastWrite = w.now
	if cap(w.buf) > 4*w.cfg.BufferSize {
		w.buf = nil // one huge event must not pin its memory
	}
	w.buf = w.buf[:0]
}

// micros formats nanoseconds as the microseconds trace files count in,
// keeping the nanoseconds as a decimal fraction.
func micros(ns int64) json.Number {
	if ns < 0 {
		return "-" + micros(-ns)
	}
	s := strconv.FormatInt(ns/1000, 10)
	if frac := ns % 1000; frac != 0 {
		f := strconv.FormatInt(frac+1000, 10)[1:] // zero-padded to 3 digits
		for f[len(f)-1] == '0' {
			f = f[:len(f)-1]
		}
		s += "." + f
	}
	return json.Number(s)
}
