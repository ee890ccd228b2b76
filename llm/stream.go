package llm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"
)

// Model streams responses. Implementations are safe for concurrent use.
//
// The sequence yields events in wire order and ends after EventDone, or with
// one non-nil error (and a zero Event). Stopping the iteration early releases
// the connection.
type Model interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// EventType names a streamed event.
type EventType string

// Streamed events.
const (
	// EventStart opens a response; Usage holds the initial counts.
	EventStart EventType = "start"
	// EventBlockStart opens content block Index; Block holds its type and,
	// for tool_use, its id and name.
	EventBlockStart EventType = "block_start"
	// EventDelta extends block Index by Delta of kind DeltaKind.
	EventDelta EventType = "delta"
	// EventBlockStop closes block Index. Block holds the complete block
	// (a text's whole text, a tool_use's id, name and whole input), final:
	// the response's block at Index is the same, so a consumer may act on
	// it before the response ends (the engine starts tool calls from it).
	// A provider that cannot tell leaves Block nil.
	EventBlockStop EventType = "block_stop"
	// EventRetry says the provider abandoned a partial response and is
	// sending the request again after Retry.Wait; drop partial content.
	EventRetry EventType = "retry"
	// EventDone carries the complete response.
	EventDone EventType = "done"
)

// DeltaKind names what a delta extends.
type DeltaKind string

// Delta kinds, as the Messages API names them.
const (
	DeltaText      DeltaKind = "text_delta"
	DeltaInputJSON DeltaKind = "input_json_delta"
	DeltaThinking  DeltaKind = "thinking_delta"
	DeltaSignature DeltaKind = "signature_delta"
)

// Event is one streamed event. Which fields are set depends on Type.
type Event struct {
	Type      EventType
	Index     int
	Block     *Block
	DeltaKind DeltaKind
	Delta     string
	Usage     Usage
	Retry     *RetryInfo
	Response  *Response
}

// RetryInfo describes a retry in progress. It is reported as it happens,
// before the wait, so that a front end can say at once that the API is not
// answering (String is the line Cohort prints).
type RetryInfo struct {
	Attempt int // the attempt about to start, from 2
	// MaxAttempts is the most attempts there will be, the first included.
	MaxAttempts int
	Wait        time.Duration
	Err         error
	// URL is the API's base URL the request went to.
	URL string
	// Status is the HTTP status of the failed attempt; 0 when no response
	// came (the server could not be reached, or the connection dropped).
	Status int
}

// String describes the retry in one line, e.g. "API unreachable at
// http://127.0.0.1:9 (connection refused); retry 3/10 in 4 s": the attempt
// about to start out of the most there will be, and the wait before it.
func (r *RetryInfo) String() string {
	url := r.URL
	if url == "" {
		url = "the API"
	}
	what := "API error at " + url // an error event in a 200 stream, say
	var ne net.Error
	var errno syscall.Errno
	switch {
	case r.Status >= 400:
	case r.Status != 0:
		what = "API response from " + url + " failed"
	case r.Err == nil, errors.As(r.Err, &ne), errors.As(r.Err, &errno):
		what = "API unreachable at " + url
	}
	return fmt.Sprintf("%s (%s); retry %d/%d in %s", what, r.Reason(), r.Attempt, r.MaxAttempts, humanWait(r.Wait))
}

// Reason is the failure in a few words: "529 Overloaded" for an error
// status, "connection refused", "no such host api.example", "timed out",
// else the innermost error's text.
func (r *RetryInfo) Reason() string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case r.Status >= 400:
		return fmt.Sprintf("%d %s", r.Status, statusText(r.Status))
	case r.Err == nil:
		return "unknown error"
	case errors.Is(r.Err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(r.Err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(r.Err, &dns) && dns.IsNotFound:
		return "no such host " + dns.Name
	case errors.As(r.Err, &ne) && ne.Timeout():
		return "timed out"
	}
	err := r.Err
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

func statusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	return http.StatusText(code)
}

// humanWait renders a wait as people read it: "4 s", "0.5 s", "1 min 5 s".
func humanWait(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Round(time.Second).Seconds())) + " s"
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

// ErrIncomplete reports a stream that ended without a complete response.
var ErrIncomplete = errors.New("llm: stream ended before the response was complete")

// Collect drains a stream and returns its complete response.
func Collect(seq iter.Seq2[Event, error]) (*Response, error) {
	var resp *Response
	for ev, err := range seq {
		if err != nil {
			return nil, err
		}
		if ev.Type == EventDone {
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, ErrIncomplete
	}
	return resp, nil
}
