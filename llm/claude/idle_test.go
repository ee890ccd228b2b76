package claude

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

// scriptTransport answers each request in-process with the next script: a
// body that is served and then, when stall is set, a connection that stays
// open with nothing more to say until the request's context ends. It lets
// the idle watchdog run under testing/synctest's fake clock.
type scriptTransport struct {
	mu      sync.Mutex
	scripts []script
	n       int
}

type script struct {
	body  string
	stall bool // after body, block until the request is cancelled
}

func (s *scriptTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	s.mu.Lock()
	sc := s.scripts[min(s.n, len(s.scripts)-1)]
	s.n++
	s.mu.Unlock()
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	return &http.Response{
		StatusCode: 200, Header: h, Request: r,
		Body: &stallingBody{ctx: r.Context(), rest: sc.body, stall: sc.stall},
	}, nil
}

func (s *scriptTransport) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

type stallingBody struct {
	ctx   context.Context
	rest  string
	stall bool
}

// Read serves at most one event per call, and fails once the request is
// cancelled, as a real connection does.
func (b *stallingBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.rest != "" {
		chunk := b.rest
		if i := strings.Index(chunk, "\n\n"); i >= 0 {
			chunk = chunk[:i+2]
		}
		n := copy(p, chunk)
		b.rest = b.rest[n:]
		return n, nil
	}
	if !b.stall {
		return 0, io.EOF
	}
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *stallingBody) Close() error { return nil }

// TestIdleTimeout: a stream that goes quiet is abandoned after IdleTimeout
// and retried as a whole.
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := textStream("done")
		half := full[:strings.Index(full, "event: content_block_stop")]
		tr := &scriptTransport{scripts: []script{{body: half, stall: true}, {body: full}}}
		rec := &recorder{}
		m := newTestModel(t, "http://fake.invalid", rec, func(c *Config) {
			c.HTTPClient = &http.Client{Transport: tr}
			c.IdleTimeout = 45 * time.Second
		})
		start := time.Now()
		evs, err := run(t, m, simpleRequest("hi"))
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 45*time.Second {
			t.Errorf("the stalled attempt was abandoned after %v of fake time, want 45s", got)
		}
		var retries []*llm.RetryInfo
		for _, e := range evs {
			if e.Type == llm.EventRetry {
				retries = append(retries, e.Retry)
			}
		}
		if len(retries) != 1 || !errors.Is(retries[0].Err, ErrStalled) {
			t.Fatalf("retries %+v, want one for a stalled stream", retries)
		}
		if got := doneResponse(t, evs).Message().TextContent(); got != "done" || tr.requests() != 2 {
			t.Errorf("text %q after %d requests", got, tr.requests())
		}
	})
}

// TestIdleTimeoutSlowConsumer: time the consumer spends between events does
// not count as the server being idle.
func TestIdleTimeoutSlowConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &scriptTransport{scripts: []script{{body: textStream("slow reader")}}}
		m := newTestModel(t, "http://fake.invalid", &recorder{}, func(c *Config) {
			c.HTTPClient = &http.Client{Transport: tr}
			c.IdleTimeout = time.Second
		})
		var types []llm.EventType
		for ev, err := range m.Stream(t.Context(), simpleRequest("hi")) {
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, ev.Type)
			time.Sleep(time.Minute)
		}
		want := []llm.EventType{llm.EventStart, llm.EventBlockStart, llm.EventDelta, llm.EventBlockStop, llm.EventDone}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestIdleTimeoutExhausted: a server that always stalls ends in ErrStalled
// after MaxAttempts.
func TestIdleTimeoutExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &scriptTransport{scripts: []script{{stall: true}}}
		m := newTestModel(t, "http://fake.invalid", &recorder{}, func(c *Config) {
			c.HTTPClient = &http.Client{Transport: tr}
			c.MaxAttempts = 3
		})
		_, err := run(t, m, simpleRequest("hi"))
		if !errors.Is(err, ErrStalled) || tr.requests() != 3 {
			t.Fatalf("err %v after %d requests; want ErrStalled after 3", err, tr.requests())
		}
		mustContain(t, err.Error(), "giving up after 3 attempts")
	})
}
