package claude

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

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
			return m.attempt(ctx, body, req.Background, yield)
		})
}

func (m *Model) policy() retry.Policy {
	u := m.cfg.BaseURL
	if u == "" {
		u = DefaultBaseURL
	}
	return retry.Policy{Name: "claude", MaxAttempts: m.cfg.MaxAttempts, Sleep: m.cfg.Sleep, Rand: m.cfg.Rand, Logf: m.cfg.Logf,
		URL: u, FailFast: m.custom && !m.reached.Load(), MaxTime: m.cfg.MaxRetryTime, Now: m.cfg.Now}
}

// attempt sends the request once and yields its events. finished reports
// that the sequence is over: the response was delivered or the consumer
// stopped. Otherwise f describes the failure.
func (m *Model) attempt(ctx context.Context, body []byte, background bool,
	yield func(llm.Event, error) bool) (f retry.Failure, finished bool) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := retry.NewWatch(retry.WatchConfig{Idle: m.cfg.IdleTimeout, Cancel: cancel, Stalled: ErrStalled,
		RequestIDHeader: "request-id", ReadIsProgress: true, NotStream: notStream, Reached: &m.reached})
	defer w.Stop()

	// What Messages.NewStreaming does, minus the parameter marshalling: the
	// SDK sends our bytes (a []byte body goes out as it is) with its headers
	// and credentials, turns error statuses into *anthropic.Error, and its
	// ssestream frames the events, turning error events into
	// *anthropic.Error too.
	var raw *http.Response
	err := m.client.Post(actx, "v1/messages", body, &raw, option.WithMiddleware(w.Middleware))
	stream := ssestream.NewStream[wireEvent](ssestream.NewDecoder(raw), err)
	defer stream.Close()

	var tr translator
	for stream.Next() {
		cur := stream.Current()
		ev, emit, err := tr.apply(&cur)
		if err != nil {
			return retry.Failure{Err: err}, false
		}
		if emit && !w.Yield(yield, ev) {
			return retry.Failure{}, true
		}
		if tr.done {
			resp, err := tr.response(w.RequestID)
			if err != nil {
				return retry.Failure{Err: err}, false
			}
			retry.FinishBody(raw.Body, finishTimeout, finishMax, cancel, errFinish)
			w.Yield(yield, llm.Event{Type: llm.EventDone, Response: resp})
			return retry.Failure{}, true
		}
	}
	return w.Annotate(m.classify(ctx, actx, stream.Err(), w, background)), false
}

// notStream explains a 2xx answer that is not an event stream.
func notStream(res *http.Response, head []byte) error {
	return fmt.Errorf("%w: HTTP %d with content-type %q instead of an event stream; body starts: %q",
		ErrProtocol, res.StatusCode, res.Header.Get("content-type"), strings.Join(strings.Fields(string(head[:min(len(head), 300)])), " "))
}

// classify explains why an attempt ended without message_stop.
func (m *Model) classify(ctx, actx context.Context, err error, w *retry.Watch, background bool) retry.Failure {
	var apiErr *anthropic.Error
	switch {
	case ctx.Err() != nil:
		return retry.Failure{Err: fmt.Errorf("claude: %w", context.Cause(ctx))}
	case errors.Is(context.Cause(actx), ErrStalled):
		return retry.Failure{Err: fmt.Errorf("%w (%s without a byte; attempt abandoned)", ErrStalled, w.Idle()), Retryable: true}
	case errors.As(err, &apiErr):
		return classifyAPIError(apiErr, background, m.cfg.Now())
	case w.ProtoErr != nil:
		return retry.Failure{Err: w.ProtoErr}
	case w.TransportErr != nil:
		return retry.Failure{Err: fmt.Errorf("claude: connection to the API failed: %w", w.TransportErr), Retryable: true}
	case err == nil:
		return retry.Failure{Err: fmt.Errorf("claude: the response ended before message_stop: %w", llm.ErrIncomplete), Retryable: true}
	case !w.Sent:
		return retry.Failure{Err: fmt.Errorf("claude: request not sent: %w", err)}
	}
	return retry.Failure{Err: fmt.Errorf("%w: %w", ErrProtocol, err)}
}

// Bounds of reading a delivered body to its end (retry.FinishBody).
var (
	finishTimeout       = time.Second
	finishMax     int64 = 64 << 10
)

// errFinish cancels an attempt whose body did not end after message_stop.
var errFinish = errors.New("claude: the response body did not end after message_stop")
