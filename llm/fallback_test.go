package llm

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// failFor fails every request for the models in fail with their error,
// and echoes the others; it records the models it was asked for.
type failFor struct {
	mu    sync.Mutex
	fail  map[string]error
	asked []string
}

func (f *failFor) Stream(_ context.Context, req *Request) iter.Seq2[Event, error] {
	f.mu.Lock()
	f.asked = append(f.asked, req.Model)
	err := f.fail[req.Model]
	f.mu.Unlock()
	return func(yield func(Event, error) bool) {
		if err != nil {
			yield(Event{}, err)
			return
		}
		yield(Event{Type: EventDone, Response: &Response{Model: req.Model}}, nil)
	}
}

func served(t *testing.T, m Model, model string) (string, error) {
	t.Helper()
	var got string
	for ev, err := range m.Stream(t.Context(), &Request{Model: model}) {
		if err != nil {
			return "", err
		}
		if ev.Type == EventDone {
			got = ev.Response.Model
		}
	}
	return got, nil
}

func TestFallback(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		fallsBack bool
	}{
		{"overloaded", &APIError{StatusCode: 529, Type: "overloaded_error"}, true},
		{"overloaded in a stream", &APIError{StatusCode: 200, Type: "overloaded_error"}, true},
		{"no such model", &APIError{StatusCode: 404, Type: "not_found_error"}, true},
		{"bad request", &APIError{StatusCode: 400, Type: "invalid_request_error"}, false},
		{"network", errors.New("connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := &failFor{fail: map[string]error{"big": tc.err}}
			switches := 0
			f := &Fallback{Model: inner, Primary: "big", Secondary: "small", OnSwitch: func(error) { switches++ }}
			got, err := served(t, f, "big")
			if tc.fallsBack != (err == nil && got == "small") {
				t.Fatalf("served %q, %v", got, err)
			}
			if got, err := served(t, f, "other"); got != "other" || err != nil {
				t.Fatalf("another model: %q, %v", got, err)
			}
			served(t, f, "big")
			want := []string{"big", "small", "other", "small"}
			if !tc.fallsBack {
				want = []string{"big", "other", "big"}
			}
			if diff := cmp.Diff(want, inner.asked); diff != "" {
				t.Fatalf("requests (-want +got):\n%s", diff)
			}
			if tc.fallsBack != (switches == 1) {
				t.Fatalf("OnSwitch called %d times", switches)
			}
		})
	}
}
