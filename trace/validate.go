package trace

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Summary describes a trace file that Validate accepted.
type Summary struct {
	// Process is the name from the first process_name event.
	Process string
	// Events counts every event in the file, metadata included.
	Events int
	// Truncated is set for an array without its closing bracket: the
	// file of a run that did not close its writer.
	Truncated bool
	// Spans counts complete ("X") events by category ("cat"), all threads.
	Spans map[string]int
	// Unfinished counts complete events whose args say "unfinished": true.
	Unfinished int
	// Tracks lists the threads that have events other than metadata,
	// ordered by sort index, then pid and tid.
	Tracks []Track
}

// Track describes one thread of a trace.
type Track struct {
	PID, TID int
	Name     string // from the last thread_name event
	// SortIndex is from the last thread_sort_index event, 0 when absent.
	SortIndex int
	// Spans counts the thread's complete events by category.
	Spans map[string]int
	// Instants counts the thread's instant events by name.
	Instants map[string]int
}

// phases are the event types of the trace-event format.
var phases = map[string]bool{
	"B": true, "E": true, "X": true, "i": true, "I": true, "C": true, "b": true, "n": true, "e": true,
	"s": true, "t": true, "f": true, "P": true, "O": true, "N": true, "D": true, "M": true,
	"V": true, "v": true, "R": true, "c": true, "(": true, ")": true,
}

// Validate parses a trace-event file — a JSON array of events, possibly
// without its closing bracket, or an object with a traceEvents array — and
// checks what a viewer needs to show it as intended: every event has ph,
// ts, pid and tid; complete events have a non-negative dur and nest
// properly on their thread (ordered by ts, ties by position in the file, as
// viewers order them); every thread with events has a thread_name.
// Nesting is checked for complete events only. Memory grows with the
// number of complete events (their times, not their args).
func Validate(r io.Reader) (Summary, error) {
	v := &validator{threads: map[threadKey]*thread{}}
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return Summary{}, fmt.Errorf("trace: not a trace file: %w", eofIsEmpty(err))
	}
	switch tok {
	case json.Delim('['):
		err = v.array(dec, true)
	case json.Delim('{'):
		err = v.object(dec)
	default:
		return Summary{}, fmt.Errorf("trace: not a trace file: it starts with %v, not [ or {", tok)
	}
	if err != nil {
		return Summary{}, err
	}
	if !v.sum.Truncated {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return Summary{}, fmt.Errorf("trace: unexpected data after the trace at byte %d", dec.InputOffset())
		}
	}
	return v.finish()
}

func eofIsEmpty(err error) error {
	if errors.Is(err, io.EOF) {
		return errors.New("the input is empty")
	}
	return err
}

type threadKey struct{ pid, tid int }

type thread struct {
	Track
	used  bool
	spans []xspan
}

type xspan struct {
	start, end int64 // nanoseconds
	name       string
	index      int
}

type validator struct {
	sum     Summary
	threads map[threadKey]*thread
}

// object reads the object form, whose traceEvents array must be whole.
func (v *validator) object(dec *json.Decoder) error {
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("trace: bad object at byte %d: %w", dec.InputOffset(), err)
		}
		if tok != "traceEvents" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("trace: bad value of %q at byte %d: %w", tok, dec.InputOffset(), err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return fmt.Errorf("trace: traceEvents is not an array (byte %d)", dec.InputOffset())
		}
		if err := v.array(dec, false); err != nil {
			return err
		}
		seen = true
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("trace: the object is not closed: %w", err)
	}
	if !seen {
		return errors.New("trace: the object has no traceEvents array")
	}
	return nil
}

// array reads events up to the closing bracket, or to the end of the input
// when truncation is allowed.
func (v *validator) array(dec *json.Decoder, truncOK bool) error {
	for dec.More() {
		var ev rawEvent
		off := dec.InputOffset()
		if err := dec.Decode(&ev); err != nil {
			var te *json.UnmarshalTypeError
			switch {
			case errors.Is(err, io.EOF) && truncOK:
				v.sum.Truncated = true // a comma and nothing after it
				return nil
			case errors.Is(err, io.ErrUnexpectedEOF):
				return fmt.Errorf("trace: event %d (byte %d) is cut off", v.sum.Events+1, off)
			case errors.As(err, &te) && te.Field == "":
				return fmt.Errorf("trace: event %d (byte %d) is a JSON %s, not an object", v.sum.Events+1, off, te.Value)
			case errors.As(err, &te):
				return fmt.Errorf("trace: event %d (byte %d): %q is a JSON %s, not a %s", v.sum.Events+1, off, te.Field, te.Value, te.Type)
			}
			return fmt.Errorf("trace: event %d (byte %d): %w", v.sum.Events+1, off, err)
		}
		v.sum.Events++
		if err := v.event(&ev); err != nil {
			return fmt.Errorf("trace: event %d (byte %d): %w", v.sum.Events, off, err)
		}
	}
	_, err := dec.Token()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) && truncOK:
		v.sum.Truncated = true
		return nil
	}
	return fmt.Errorf("trace: the event array is not closed (byte %d): %w", dec.InputOffset(), err)
}

type rawEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	TS   json.RawMessage `json:"ts"`
	Dur  json.RawMessage `json:"dur"`
	PID  json.RawMessage `json:"pid"`
	TID  json.RawMessage `json:"tid"`
	S    string          `json:"s"`
	Args json.RawMessage `json:"args"`
}

// event checks one event and adds it to the summary.
func (v *validator) event(ev *rawEvent) error {
	if ev.Ph == "" {
		return errors.New(`no "ph"`)
	}
	if !phases[ev.Ph] {
		return fmt.Errorf("unknown ph %q", ev.Ph)
	}
	ts, err := number(ev.TS, "ts")
	if err != nil {
		return err
	}
	p, err := integer(ev.PID, "pid")
	if err != nil {
		return err
	}
	tid, err := integer(ev.TID, "tid")
	if err != nil {
		return err
	}
	th := v.threads[threadKey{p, tid}]
	if th == nil {
		th = &thread{Track: Track{PID: p, TID: tid, Spans: map[string]int{}, Instants: map[string]int{}}}
		v.threads[threadKey{p, tid}] = th
	}
	switch ev.Ph {
	case "M":
		return v.metadata(th, ev)
	case "X":
		dur, err := number(ev.Dur, "dur")
		if err != nil {
			return err
		}
		if dur < 0 {
			return fmt.Errorf("complete event %q has a negative dur", ev.Name)
		}
		start := nanos(ts)
		th.spans = append(th.spans, xspan{start: start, end: start + nanos(dur), name: ev.Name, index: v.sum.Events})
		th.Spans[ev.Cat]++
		if v.sum.Spans == nil {
			v.sum.Spans = map[string]int{}
		}
		v.sum.Spans[ev.Cat]++
		var a struct {
			Unfinished bool `json:"unfinished"`
		}
		if len(ev.Args) > 0 && json.Unmarshal(ev.Args, &a) == nil && a.Unfinished {
			v.sum.Unfinished++
		}
	case "i", "I":
		if ev.S != "" && ev.S != "t" && ev.S != "p" && ev.S != "g" {
			return fmt.Errorf("instant event %q has scope %q; use t, p or g", ev.Name, ev.S)
		}
		th.Instants[ev.Name]++
	}
	th.used = true
	return nil
}

// metadata checks the metadata events that name and order tracks.
func (v *validator) metadata(th *thread, ev *rawEvent) error {
	var a struct {
		Name      *string          `json:"name"`
		SortIndex *json.RawMessage `json:"sort_index"`
	}
	if len(ev.Args) > 0 {
		if err := json.Unmarshal(ev.Args, &a); err != nil {
			return fmt.Errorf("metadata %q: bad args: %w", ev.Name, err)
		}
	}
	switch ev.Name {
	case "process_name":
		if a.Name == nil {
			return errors.New("process_name without args.name")
		}
		if v.sum.Process == "" {
			v.sum.Process = *a.Name
		}
	case "thread_name":
		if a.Name == nil || *a.Name == "" {
			return fmt.Errorf("thread_name of tid %d without args.name", th.TID)
		}
		th.Name = *a.Name
	case "thread_sort_index":
		if a.SortIndex == nil {
			return fmt.Errorf("thread_sort_index of tid %d without args.sort_index", th.TID)
		}
		n, err := integer(*a.SortIndex, "args.sort_index")
		if err != nil {
			return err
		}
		th.SortIndex = n
	}
	return nil
}

// finish checks names and nesting and orders the tracks.
func (v *validator) finish() (Summary, error) {
	for _, th := range v.threads {
		if !th.used {
			continue
		}
		if th.Name == "" {
			return Summary{}, fmt.Errorf("trace: pid %d tid %d has events but no thread_name", th.PID, th.TID)
		}
		if err := nest(th); err != nil {
			return Summary{}, err
		}
		v.sum.Tracks = append(v.sum.Tracks, th.Track)
	}
	slices.SortFunc(v.sum.Tracks, func(a, b Track) int {
		return cmp.Or(cmp.Compare(a.SortIndex, b.SortIndex), cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID))
	})
	return v.sum, nil
}

// nest checks that a thread's complete events form a tree: each starts
// after the one before it has ended or ends no later than it.
func nest(th *thread) error {
	slices.SortStableFunc(th.spans, func(a, b xspan) int { return cmp.Compare(a.start, b.start) })
	var stack []xspan
	for _, s := range th.spans {
		for len(stack) > 0 && stack[len(stack)-1].end <= s.start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			if top := stack[len(stack)-1]; s.end > top.end {
				return fmt.Errorf("trace: tid %d (%s): %q (event %d, %s–%s µs) overlaps %q (event %d, %s–%s µs) without nesting in it",
					th.TID, th.Name, s.name, s.index, micros(s.start), micros(s.end),
					top.name, top.index, micros(top.start), micros(top.end))
			}
		}
		stack = append(stack, s)
	}
	return nil
}

// number parses a JSON number (not a string holding one).
func number(raw json.RawMessage, field string) (float64, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf("no %q", field)
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, fmt.Errorf("%q is %s, not a number", field, raw)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q is %s, not a usable number", field, raw)
	}
	return f, nil
}

// integer parses a JSON number that must be a whole int.
func integer(raw json.RawMessage, field string) (int, error) {
	f, err := number(raw, field)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%q is %s, not an integer", field, raw)
	}
	return int(f), nil
}

// nanos converts microseconds to nanoseconds, saturating far outside any
// real trace's range.
func nanos(us float64) int64 {
	ns := math.Round(us * 1000)
	switch {
	case ns > math.MaxInt64/2:
		return math.MaxInt64 / 2
	case ns < math.MinInt64/2:
		return math.MinInt64 / 2
	}
	return int64(ns)
}
