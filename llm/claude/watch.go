package claude

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// watch observes one attempt at the HTTP level, through an SDK middleware:
// it records whether the request went out, the request id, transport
// errors and body read errors (which tell a dropped connection from a
// malformed stream), and runs the idle watchdog, which cancels the attempt's
// context with ErrStalled when no byte arrives for idle.
//
// Every method but the timer callback runs on the consumer's goroutine; the
// callback only cancels the context, which is safe from any goroutine.
type watch struct {
	idle   time.Duration
	timer  *time.Timer // nil when the watchdog is off
	cancel context.CancelCauseFunc

	sent         bool
	requestID    string
	transportErr error // the round trip or a body read failed
	protoErr     error // a 2xx answer that is not an event stream
}

func newWatch(idle time.Duration, cancel context.CancelCauseFunc) *watch {
	w := &watch{idle: idle, cancel: cancel}
	if idle > 0 {
		w.timer = time.AfterFunc(idle, func() { cancel(ErrStalled) })
	}
	return w
}

// touch restarts the idle countdown.
func (w *watch) touch() {
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
}

// stop ends the watchdog. The attempt is over.
func (w *watch) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// yield hands ev to the consumer with the watchdog paused: a slow consumer
// is not a stalled server.
func (w *watch) yield(yield func(llm.Event, error) bool, ev llm.Event) bool {
	if w.timer != nil {
		w.timer.Stop()
	}
	ok := yield(ev, nil)
	w.touch()
	return ok
}

// middleware is an SDK middleware: it wraps the round trip of the attempt.
func (w *watch) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	w.sent = true
	res, err := next(req)
	if err != nil {
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		w.transportErr = err
		return nil, err
	}
	w.touch()
	w.requestID = res.Header.Get("request-id")
	res.Body = &watchedBody{rc: res.Body, w: w}
	if res.StatusCode < 300 && !isEventStream(res.Header.Get("content-type")) {
		head := make([]byte, 300)
		n, _ := io.ReadFull(res.Body, head)
		res.Body.Close()
		w.transportErr = nil // the body was read for the message only
		w.protoErr = fmt.Errorf("%w: HTTP %d with content-type %q instead of an event stream; body starts: %q",
			ErrProtocol, res.StatusCode, res.Header.Get("content-type"), strings.Join(strings.Fields(string(head[:n])), " "))
		return nil, w.protoErr
	}
	return res, nil
}

func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// watchedBody is a response body that feeds the watchdog and records read
// errors.
type watchedBody struct {
	rc io.ReadCloser
	w  *watch
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.touch()
	}
	if err != nil && !errors.Is(err, io.EOF) && b.w.transportErr == nil {
		b.w.transportErr = err
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.rc.Close() }
