package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/retry"
)

// Stream sends req and yields its events, retrying as Config describes. The
// sequence ends after llm.EventDone or with one error. Stopping the iteration
// early closes the connection. Cancelling ctx ends the sequence at once with
// an error that wraps ctx's.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return m.policy().Stream(ctx, func() ([]byte, error) { return m.encode(req) },
		func(body []byte, yield func(llm.Event, error) bool) (retry.Failure, bool) {
			return m.attempt(ctx, body, req.Background, m.runaway(req), yield)
		})
}

// translator turns one protocol's stream into llm events and accumulates
// the response. It belongs to one attempt.
type translator interface {
	// apply consumes one event (its SSE name, empty in the chat protocol,
	// and its data) and returns the llm events to emit. A *streamError is
	// an error the server reported in the stream.
	apply(name string, data []byte) ([]llm.Event, error)
	// finished reports that the response is complete but for its end (the
	// chat protocol's finish_reason arrived).
	finished() bool
	// done reports the protocol's end of the response.
	done() bool
	// response closes the open blocks and returns their stop events and
	// the complete response.
	response(requestID string) ([]llm.Event, *llm.Response, error)
}

// streamError is an error the server sent inside a stream.
type streamError struct{ e wireError }

func (s *streamError) Error() string { return "openai: error in the stream: " + s.e.Message }

// tailTimeout bounds the wait for the end of a chat stream whose
// finish_reason has arrived (the usage chunk and [DONE] follow at once on
// a working server): a server that then hangs has delivered its answer.
var tailTimeout = 5 * time.Second

// errFinish cancels an attempt whose body did not end after the response.
var errFinish = errors.New("openai: the response body did not end after the response")

// Bounds of reading a delivered body to its end (retry.FinishBody).
var (
	finishTimeout       = time.Second
	finishMax     int64 = 64 << 10
)

// attempt sends the request once and yields its events. finished reports
// that the sequence is over: the response was delivered or the consumer
// stopped. Otherwise f describes the failure.
func (m *Model) attempt(ctx context.Context, body []byte, background bool, limit int, yield func(llm.Event, error) bool) (retry.Failure, bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := retry.NewWatch(retry.WatchConfig{Idle: m.cfg.IdleTimeout, Cancel: cancel, Stalled: ErrStalled,
		RequestIDHeader: "x-request-id", NotStream: notStream, Reached: &m.reached})
	defer w.Stop()

	// The SDK sends our bytes with its headers and credentials; its
	// ssestream decoder frames the events; error statuses come back as
	// errors, classified from the body the watch kept.
	path := "chat/completions"
	var tr translator = &chatTranslator{}
	if m.cfg.API == Responses {
		path, tr = "responses", &respTranslator{}
	}
	var raw *http.Response
	err := m.client.Post(actx, path, body, &raw, option.WithMiddleware(w.Middleware))
	if err != nil || raw == nil {
		return w.Annotate(m.classify(ctx, actx, err, w, background)), false
	}
	dec := ssestream.NewDecoder(raw)
	defer dec.Close()
	shortened, streamed := false, 0
	for dec.Next() {
		w.Touch()
		ev := dec.Event()
		evs, err := tr.apply(ev.Type, bytes.TrimSpace(ev.Data))
		if err != nil {
			var se *streamError
			if errors.As(err, &se) {
				return apiFailure(http.StatusOK, se.e, nil, w.RequestID, background, m.cfg.Now()), false
			}
			return retry.Failure{Err: err}, false
		}
		for _, e := range evs {
			streamed += len(e.Delta)
			if !w.Yield(yield, e) {
				return retry.Failure{}, true
			}
		}
		if tr.done() {
			retry.FinishBody(raw.Body, finishTimeout, finishMax, cancel, errFinish)
			return m.deliver(tr, w, yield)
		}
		if limit > 0 && streamed > limit {
			// A runaway answer on a server that was sent no bound: end it
			// as the server would have at the bound.
			return m.deliver(&cutOff{tr}, w, yield)
		}
		if tr.finished() && !shortened {
			shortened = true
			w.SetIdle(min(w.Idle(), tailTimeout))
		}
	}
	// The stream ended without the protocol's end. After a finish_reason
	// that is a server that omits [DONE] (a clean end) or hangs after the
	// answer (the shortened watchdog fired): the answer is complete.
	cause := context.Cause(actx)
	if tr.finished() && ctx.Err() == nil && (dec.Err() == nil && w.TransportErr == nil || errors.Is(cause, ErrStalled)) {
		return m.deliver(tr, w, yield)
	}
	return w.Annotate(m.classify(ctx, actx, dec.Err(), w, background)), false
}

// runaway is how many bytes of deltas a response may stream before it is
// cut off: only when the request's MaxTokens was not sent
// (Config.MaxTokensParam is OmitMaxTokens), at twice the bound (taking a
// token for four bytes). A server told no bound (llama.cpp with context
// shift, say) may otherwise generate forever.
func (m *Model) runaway(req *llm.Request) int {
	if m.cfg.MaxTokensParam != OmitMaxTokens || req.MaxTokens <= 0 {
		return 0
	}
	return 8 * req.MaxTokens
}

// cutOff is a response ended by the client at its bound.
type cutOff struct{ translator }

func (c *cutOff) response(requestID string) ([]llm.Event, *llm.Response, error) {
	evs, resp, err := c.translator.response(requestID)
	if resp != nil {
		resp.StopReason = llm.StopMaxTokens
	}
	return evs, resp, err
}

// deliver yields the stop events and the complete response.
func (m *Model) deliver(tr translator, w *retry.Watch, yield func(llm.Event, error) bool) (retry.Failure, bool) {
	evs, resp, err := tr.response(w.RequestID)
	if err != nil {
		return retry.Failure{Err: err}, false
	}
	for _, e := range evs {
		if !w.Yield(yield, e) {
			return retry.Failure{}, true
		}
	}
	w.Yield(yield, llm.Event{Type: llm.EventDone, Response: resp})
	return retry.Failure{}, true
}

// classify explains why an attempt ended without a complete response.
func (m *Model) classify(ctx, actx context.Context, err error, w *retry.Watch, background bool) retry.Failure {
	var be *bodyError
	switch {
	case ctx.Err() != nil:
		return retry.Failure{Err: fmt.Errorf("openai: %w", context.Cause(ctx))}
	case errors.Is(context.Cause(actx), ErrStalled):
		return retry.Failure{Err: fmt.Errorf("%w (%s without an event; attempt abandoned)", ErrStalled, w.Idle()), Retryable: true}
	case errors.As(w.ProtoErr, &be):
		e := be.e
		e.Message = fmt.Sprintf("HTTP %d with an error body instead of an event stream: %s", be.status, e.Message)
		return apiFailure(be.status, e, be.header, w.RequestID, background, m.cfg.Now())
	case w.ProtoErr != nil:
		return retry.Failure{Err: w.ProtoErr}
	case w.Status >= 400:
		return statusFailure(w.Status, w.ErrorBody, w.Header, w.RequestID, background, m.cfg.Now())
	case w.TransportErr != nil:
		return retry.Failure{Err: fmt.Errorf("openai: connection to the server failed: %w", w.TransportErr), Retryable: true}
	case err == nil:
		return retry.Failure{Err: fmt.Errorf("openai: the response ended before it was complete: %w", llm.ErrIncomplete), Retryable: true}
	case !w.Sent:
		return retry.Failure{Err: fmt.Errorf("openai: request not sent: %w", err)}
	}
	return retry.Failure{Err: fmt.Errorf("%w: %w", ErrProtocol, err)}
}
