package retry

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// WatchConfig configures a Watch.
type WatchConfig struct {
	// Idle is how long the attempt may go without progress; zero or
	// negative turns the watchdog off.
	Idle time.Duration
	// Cancel cancels the attempt's context; the watchdog calls it with
	// Stalled as the cause.
	Cancel  context.CancelCauseFunc
	Stalled error
	// RequestIDHeader names the response header that carries the request id.
	RequestIDHeader string
	// ReadIsProgress makes every byte read from the body restart the idle
	// countdown. Without it only Touch does (a provider that counts decoded
	// events, so that keep-alive comments do not hold a dead stream open).
	ReadIsProgress bool
	// Reached, when set, is set once any answer arrives (the provider's
	// memory that the server at its URL exists; see Policy.FailFast).
	Reached *atomic.Bool
	// NotStream builds the error for a 2xx answer whose content type is not
	// text/event-stream, from the response and the first bytes of its body
	// (up to MaxHead).
	NotStream func(res *http.Response, head []byte) error
}

// MaxHead is how much of an unexpected body a Watch keeps for the error
// message: a 2xx answer that is not an event stream, or an error status.
const MaxHead = 4096

// Watch observes one attempt at the HTTP level, through an SDK middleware:
// it records whether the request went out, the request id, transport errors
// and body read errors (which tell a dropped connection from a malformed
// stream), the start of an error status's body, and runs the idle watchdog,
// which cancels the attempt's context with Stalled when nothing arrives for
// too long.
//
// Every method but the timer callback runs on the consumer's goroutine; the
// callback only cancels the context, which is safe from any goroutine.
type Watch struct {
	cfg   WatchConfig
	idle  time.Duration
	timer *time.Timer // nil when the watchdog is off

	// Sent reports that the request went out.
	Sent bool
	// Status and Header are the response's, zero before one arrived.
	Status    int
	Header    http.Header
	RequestID string
	// TransportErr is set when the round trip or a body read failed.
	TransportErr error
	// ProtoErr is the NotStream error of a 2xx answer that is not an event
	// stream.
	ProtoErr error
	// ErrorBody holds the start of the body of an error status (≥ 400), as
	// far as it was read.
	ErrorBody []byte
}

// NewWatch starts the watchdog.
func NewWatch(cfg WatchConfig) *Watch {
	w := &Watch{cfg: cfg, idle: cfg.Idle}
	if cfg.Idle > 0 {
		w.timer = time.AfterFunc(cfg.Idle, func() { cfg.Cancel(cfg.Stalled) })
	}
	return w
}

// Idle returns the watchdog's current countdown.
func (w *Watch) Idle() time.Duration { return w.idle }

// SetIdle changes the countdown and restarts it (a provider shortens it once
// a response is complete but for its end).
func (w *Watch) SetIdle(d time.Duration) {
	if w.timer == nil || d <= 0 {
		return
	}
	w.idle = d
	w.timer.Reset(d)
}

// Touch restarts the idle countdown.
func (w *Watch) Touch() {
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
}

// Stop ends the watchdog. The attempt is over.
func (w *Watch) Stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// Yield hands ev to the consumer with the watchdog paused: a slow consumer
// is not a stalled server.
func (w *Watch) Yield(yield func(llm.Event, error) bool, ev llm.Event) bool {
	if w.timer != nil {
		w.timer.Stop()
	}
	ok := yield(ev, nil)
	w.Touch()
	return ok
}

// Middleware wraps the round trip of the attempt; pass it to the SDK's
// option.WithMiddleware.
func (w *Watch) Middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	w.Sent = true
	res, err := next(req)
	if err != nil {
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		w.TransportErr = err
		return nil, err
	}
	w.Touch()
	w.Status, w.Header = res.StatusCode, res.Header
	if w.cfg.Reached != nil {
		w.cfg.Reached.Store(true)
	}
	if w.cfg.RequestIDHeader != "" {
		w.RequestID = res.Header.Get(w.cfg.RequestIDHeader)
	}
	res.Body = &watchedBody{rc: res.Body, w: w, keep: res.StatusCode >= 400}
	if res.StatusCode < 300 && !IsEventStream(res.Header.Get("content-type")) && w.cfg.NotStream != nil {
		head := make([]byte, MaxHead)
		n, _ := io.ReadFull(res.Body, head)
		res.Body.Close()
		w.TransportErr = nil // the body was read for the message only
		w.ProtoErr = w.cfg.NotStream(res, head[:n])
		return nil, w.ProtoErr
	}
	return res, nil
}

// Annotate adds what the attempt's HTTP exchange says to f: the status of
// the answer, and whether the connection was refused.
func (w *Watch) Annotate(f Failure) Failure {
	f.Status = w.Status
	f.Refused = w.Status == 0 && w.TransportErr != nil && errors.Is(w.TransportErr, syscall.ECONNREFUSED)
	return f
}

// IsEventStream reports whether contentType is text/event-stream.
func IsEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// watchedBody is a response body that feeds the watchdog, records read
// errors and keeps the start of an error body.
type watchedBody struct {
	rc   io.ReadCloser
	w    *Watch
	keep bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		if b.w.cfg.ReadIsProgress {
			b.w.Touch()
		}
		if b.keep && len(b.w.ErrorBody) < MaxHead {
			b.w.ErrorBody = append(b.w.ErrorBody, p[:min(n, MaxHead-len(b.w.ErrorBody))]...)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) && b.w.TransportErr == nil {
		b.w.TransportErr = err
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.rc.Close() }

// FinishBody reads what is left of a delivered response (normally only the
// end of the chunked body) before it is closed. net/http reuses a connection
// only when its body was read to the end; closing it right after the last
// event would make every request pay a new TCP (and TLS) handshake. A server
// that keeps sending or holds the body open is given up on after limit bytes
// or timeout, by cancelling the attempt with cause; the message is complete
// either way.
func FinishBody(body io.Reader, timeout time.Duration, limit int64, cancel context.CancelCauseFunc, cause error) {
	t := time.AfterFunc(timeout, func() { cancel(cause) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, limit)
}
