package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/cohort-dev/cohort/llm"
)

// Stream sends req and yields its events, retrying as Config describes. The
// sequence ends after llm.EventDone or with one error. Stopping the iteration
// early closes the connection. Cancelling ctx ends the sequence at once with
// an error that wraps ctx's.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, err := m.encode(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for n := 1; ; n++ {
			f, finished := m.attempt(ctx, body, req.Background, yield)
			if finished {
				return
			}
			if ctx.Err() != nil {
				yield(llm.Event{}, fmt.Errorf("claude: %w", context.Cause(ctx)))
				return
			}
			if !f.retryable {
				yield(llm.Event{}, f.err)
				return
			}
			if n >= m.cfg.MaxAttempts {
				yield(llm.Event{}, fmt.Errorf("claude: giving up after %d attempts: %w", n, f.err))
				return
			}
			wait := backoff(n, f, m.cfg.Rand)
			m.cfg.logf("claude: attempt %d of %d failed, retrying in %s: %v", n, m.cfg.MaxAttempts, wait, f.err)
			retry := &llm.RetryInfo{Attempt: n + 1, Wait: wait, Err: f.err}
			if !yield(llm.Event{Type: llm.EventRetry, Retry: retry}, nil) {
				return
			}
			if err := m.cfg.Sleep(ctx, wait); err != nil {
				yield(llm.Event{}, fmt.Errorf("claude: waiting to retry: %w", err))
				return
			}
		}
	}
}

// attempt sends the request once and yields its events. finished reports
// that the sequence is over: the response was delivered or the consumer
// stopped. Otherwise f describes the failure.
func (m *Model) attempt(ctx context.Context, body []byte, background bool,
	yield func(llm.Event, error) bool) (f failure, finished bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := newWatch(m.cfg.IdleTimeout, cancel)
	defer w.stop()

	// What Messages.NewStreaming does, minus the parameter marshalling: the
	// SDK sends our bytes (a []byte body goes out as it is) with its headers
	// and credentials, turns error statuses into *anthropic.Error, and its
	// ssestream frames the events, turning error events into
	// *anthropic.Error too.
	var raw *http.Response
	err := m.client.Post(actx, "v1/messages", body, &raw, option.WithMiddleware(w.middleware))
	stream := ssestream.NewStream[wireEvent](ssestream.NewDecoder(raw), err)
	defer stream.Close()

	var tr translator
	for stream.Next() {
		cur := stream.Current()
		ev, emit, err := tr.apply(&cur)
		if err != nil {
			return failure{err: err}, false
		}
		if emit && !w.yield(yield, ev) {
			return failure{}, true
		}
		if tr.done {
			resp, err := tr.response(w.requestID)
			if err != nil {
				return failure{err: err}, false
			}
			finishBody(raw.Body, cancel)
			w.yield(yield, llm.Event{Type: llm.EventDone, Response: resp})
			return failure{}, true
		}
	}
	return m.classify(ctx, actx, stream.Err(), w, background), false
}

// classify explains why an attempt ended without message_stop.
func (m *Model) classify(ctx, actx context.Context, err error, w *watch, background bool) failure {
	var apiErr *anthropic.Error
	switch {
	case ctx.Err() != nil:
		return failure{err: fmt.Errorf("claude: %w", context.Cause(ctx))}
	case errors.Is(context.Cause(actx), ErrStalled):
		return failure{err: fmt.Errorf("%w (%s without a byte; attempt abandoned)", ErrStalled, w.idle), retryable: true}
	case errors.As(err, &apiErr):
		return classifyAPIError(apiErr, background, m.cfg.Now())
	case w.protoErr != nil:
		return failure{err: w.protoErr}
	case w.transportErr != nil:
		return failure{err: fmt.Errorf("claude: connection to the API failed: %w", w.transportErr), retryable: true}
	case err == nil:
		return failure{err: fmt.Errorf("claude: the response ended before message_stop: %w", llm.ErrIncomplete), retryable: true}
	case !w.sent:
		return failure{err: fmt.Errorf("claude: request not sent: %w", err)}
	}
	return failure{err: fmt.Errorf("%w: %w", ErrProtocol, err)}
}

// Bounds of finishBody.
var (
	finishTimeout       = time.Second
	finishMax     int64 = 64 << 10
)

// errFinish cancels an attempt whose body did not end after message_stop.
var errFinish = errors.New("claude: the response body did not end after message_stop")

// finishBody reads what is left of a delivered response (normally only the
// end of the chunked body) before it is closed. net/http reuses a
// connection only when its body was read to the end; closing it right after
// message_stop would make every request pay a new TCP (and, against the
// API, TLS) handshake. A server that keeps sending or holds the body open
// is given up on after finishMax bytes or finishTimeout, by cancelling the
// attempt; the message is complete either way.
func finishBody(body io.Reader, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(finishTimeout, func() { cancel(errFinish) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, finishMax)
}
