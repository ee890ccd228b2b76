package llm

import (
	"context"
	"errors"
	"iter"
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
	// EventBlockStop closes block Index.
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

// RetryInfo describes a retry in progress.
type RetryInfo struct {
	Attempt int // the attempt about to start, from 2
	Wait    time.Duration
	Err     error
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
