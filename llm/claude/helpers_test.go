package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// rawServer is an httptest server driven by a handler written in the test,
// for the malformed-protocol cases the fake API does not produce. It records
// every request body.
type rawServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
}

// newRawServer serves handle; n is the 1-based number of the request.
func newRawServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *rawServer {
	t.Helper()
	s := &rawServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.heads = append(s.heads, r.Header.Clone())
		n := len(s.bodies)
		s.mu.Unlock()
		handle(w, r, n)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *rawServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func (s *rawServer) body(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

func (s *rawServer) header(i int) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heads[i]
}

// writeSSE writes body as an event stream, flushing it.
func writeSSE(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("request-id", "req_raw")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sse renders one event.
func sse(event string, data any) string {
	var s string
	switch d := data.(type) {
	case string:
		s = d
	default:
		b, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		s = string(b)
	}
	return fmt.Sprintf("event: %s\ndata: %s\n\n", event, s)
}

// textStream is a complete, well-formed stream answering text.
func textStream(text string) string {
	return sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}`) +
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
		sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}}) +
		sse("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`) +
		sse("message_stop", `{"type":"message_stop"}`)
}

// readTestdata returns testdata/name.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recorder is an injected Sleep and Rand: it records every wait without
// sleeping, and hands out jitter values in turn.
type recorder struct {
	mu     sync.Mutex
	waits  []time.Duration
	jitter []float64
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *recorder) rand() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.jitter) == 0 {
		return 0
	}
	v := r.jitter[0]
	r.jitter = r.jitter[1:]
	return v
}

func (r *recorder) recorded() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// newTestModel returns a Model on baseURL whose waits go to rec.
func newTestModel(t *testing.T, baseURL string, rec *recorder, edit func(*Config)) *Model {
	t.Helper()
	cfg := Config{APIKey: "sk-test", BaseURL: baseURL, Sleep: rec.sleep, Rand: rec.rand}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// run drains a stream, returning its events (the error excluded) and its
// error.
func run(t *testing.T, m *Model, req *llm.Request) ([]llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	for ev, err := range m.Stream(t.Context(), req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// simpleRequest is a one-message request.
func simpleRequest(text string) *llm.Request {
	return &llm.Request{Model: "claude-test", MaxTokens: 1024, Messages: []llm.Message{llm.UserText(text)}}
}

// eventTypes lists the types of evs.
func eventTypes(evs []llm.Event) []llm.EventType {
	out := make([]llm.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// last returns the final event, which must be EventDone.
func doneResponse(t *testing.T, evs []llm.Event) *llm.Response {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventDone {
		t.Fatalf("stream did not end with EventDone: %v", eventTypes(evs))
	}
	return evs[len(evs)-1].Response
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// readFile returns testdata/name as a string.
func readFile(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	return string(b), err
}
