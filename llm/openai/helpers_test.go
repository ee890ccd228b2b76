package openai

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waits records the waits between attempts instead of sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// fake starts the fake API and closes it with the test.
func fake(t *testing.T, cfg fakeapi.Config) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(cfg)
	t.Cleanup(srv.Close)
	return srv
}

// model returns a Model for api on the server at base (the fake's URL),
// with waits recorded in w and no jitter. edit may change the Config.
func model(t *testing.T, base string, api API, w *waits, edit func(*Config)) *Model {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg := Config{API: api, APIKey: "sk-test", BaseURL: base + "/v1", HTTPClient: &http.Client{Transport: tr},
		Sleep: w.sleep, Rand: func() float64 { return 0 }}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// drain runs a stream and returns its events and error.
func drain(t *testing.T, m llm.Model, req *llm.Request) ([]llm.Event, error) {
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

// final returns the response of a stream that must have succeeded.
func final(t *testing.T, evs []llm.Event, err error) *llm.Response {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventDone {
		t.Fatalf("the stream did not end with done: %d events", len(evs))
	}
	return evs[len(evs)-1].Response
}

// streamed adds up the deltas of each block.
func streamed(evs []llm.Event) map[int]string {
	out := map[int]string{}
	for _, e := range evs {
		if e.Type == llm.EventDelta {
			out[e.Index] += e.Delta
		}
	}
	return out
}

func ask(text string) *llm.Request {
	return &llm.Request{Model: "qwen3-coder", MaxTokens: 4096, Messages: []llm.Message{llm.UserText(text)},
		Tools: []llm.ToolDef{{Name: "Bash", Description: "Runs a command.", InputSchema: []byte(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}}
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

// respond runs req and returns the response of a stream that must succeed.
func respond(t *testing.T, m llm.Model, req *llm.Request) *llm.Response {
	t.Helper()
	evs, err := drain(t, m, req)
	return final(t, evs, err)
}
