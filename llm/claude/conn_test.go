package claude

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// connServer serves textStream and counts the TCP connections it accepts.
// After message_stop it holds the end of the body back for hold, or until
// the client goes away, so a client that closes the body as soon as it has
// message_stop is seen dropping the connection.
type connServer struct {
	*httptest.Server
	conns atomic.Int32
}

func newConnServer(t *testing.T, hold time.Duration) *connServer {
	t.Helper()
	s := &connServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w, textStream("hi"))
		select {
		case <-r.Context().Done():
		case <-time.After(hold):
		}
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func connModel(t *testing.T, url string) *Model {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return newTestModel(t, url, &recorder{}, func(c *Config) { c.HTTPClient = &http.Client{Transport: tr} })
}

// A delivered response is read to its end, so the next request goes out on
// the same connection instead of paying a new handshake.
func TestConnectionIsReusedAfterMessageStop(t *testing.T) {
	s := newConnServer(t, 50*time.Millisecond)
	m := connModel(t, s.URL)
	for i := range 3 {
		evs, err := run(t, m, simpleRequest("hello"))
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		if got := doneResponse(t, evs).Content[0].Text; got != "hi" {
			t.Fatalf("request %d: text %q", i+1, got)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Fatalf("3 sequential requests used %d connections, want 1", n)
	}
}

// A server that never ends the body after message_stop costs at most
// finishTimeout: the message is delivered and the attempt ends.
func TestBodyHeldOpenAfterMessageStop(t *testing.T) {
	old := finishTimeout
	finishTimeout = 20 * time.Millisecond
	t.Cleanup(func() { finishTimeout = old })
	s := newConnServer(t, time.Hour)
	m := connModel(t, s.URL)
	evs, err := run(t, m, simpleRequest("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if got := eventTypes(evs); got[len(got)-1] != llm.EventDone {
		t.Fatalf("events %v, want the last to be done", got)
	}
	if got := doneResponse(t, evs).Content[0].Text; got != "hi" {
		t.Fatalf("text %q", got)
	}
}
