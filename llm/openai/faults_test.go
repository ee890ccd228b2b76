package openai

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// failFirst fails the first n attempts of each request with f, then
// answers "finally".
func failFirst(n int, f fakeapi.Fault) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		reply := fakeapi.TextReply("finally " + strings.Repeat("words ", 20))
		if r.Attempt <= n {
			f := f
			reply.Fault = &f
		}
		return reply
	}
}

// TestFaults runs every fault through both protocols: what is retried,
// after which waits, and what error is left when it is not.
func TestFaults(t *testing.T) {
	backoff1 := []time.Duration{500 * time.Millisecond}
	tests := []struct {
		name       string
		policy     fakeapi.Policy
		background bool
		attempts   int
		wantErr    string // "" = success
		status     int    // of the *llm.APIError, when there is one
		requests   int
		waits      []time.Duration
	}{
		{"429 with retry-after", failFirst(1, fakeapi.Fault{Kind: fakeapi.RateLimited, RetryAfter: "2"}), false, 0, "", 429, 2, []time.Duration{2 * time.Second}},
		{"429 with retry-after-ms", failFirst(1, fakeapi.Fault{Kind: fakeapi.RateLimited, RetryAfterMs: "1500"}), false, 0, "", 429, 2, []time.Duration{1500 * time.Millisecond}},
		{"503 overloaded backs off", failFirst(2, fakeapi.Fault{Kind: fakeapi.Overloaded}), false, 0, "", 503, 3, []time.Duration{500 * time.Millisecond, time.Second}},
		{"503 is retried in the background too", failFirst(1, fakeapi.Fault{Kind: fakeapi.Overloaded}), true, 0, "", 503, 2, backoff1},
		{"500", failFirst(1, fakeapi.Fault{Kind: fakeapi.ServerError}), false, 0, "", 500, 2, backoff1},
		{"529 from a proxy", failFirst(1, fakeapi.Fault{Kind: fakeapi.ServerError, Status: 529}), false, 0, "", 529, 2, backoff1},
		{"529 not in the background", failFirst(1, fakeapi.Fault{Kind: fakeapi.ServerError, Status: 529}), true, 0, "529", 529, 1, nil},
		{"stream error", failFirst(1, fakeapi.Fault{Kind: fakeapi.StreamError}), false, 0, "", 200, 2, backoff1},
		{"cut connection", failFirst(1, fakeapi.Fault{Kind: fakeapi.CutConnection}), false, 0, "", 0, 2, backoff1},
		{"html 502 from a proxy", failFirst(1, fakeapi.Fault{Kind: fakeapi.HTMLError}), false, 0, "", 502, 2, backoff1},
		{"200 with a server error body", failFirst(1, fakeapi.Fault{Kind: fakeapi.ErrorBody, Message: "model crashed"}), false, 0, "", 200, 2, backoff1},
		{"200 with a request error body", failFirst(1, fakeapi.Fault{Kind: fakeapi.ErrorBody, Type: "invalid_request_error", Message: "context too long"}), false, 0, "context too long", 200, 1, nil},
		{"400", failFirst(5, fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "bad tool schema"}), false, 0, "bad tool schema", 400, 1, nil},
		{"401", failFirst(5, fakeapi.Fault{Kind: fakeapi.Unauthorized}), false, 0, "401", 401, 1, nil},
		{"403", failFirst(5, fakeapi.Fault{Kind: fakeapi.PermissionDenied}), false, 0, "403", 403, 1, nil},
		{"exhausted quota", failFirst(5, fakeapi.Fault{Kind: fakeapi.SpendLimit}), false, 0, "insufficient_quota", 429, 1, nil},
		{"giving up", failFirst(5, fakeapi.Fault{Kind: fakeapi.ServerError}), false, 3, "giving up after 3 attempts", 500, 3, []time.Duration{500 * time.Millisecond, time.Second}},
	}
	for _, tt := range tests {
		for _, api := range []API{Chat, Responses} {
			t.Run(tt.name+"/"+string(api), func(t *testing.T) {
				srv := fake(t, fakeapi.Config{Policy: tt.policy})
				w := &waits{}
				m := model(t, srv.URL, api, w, func(c *Config) { c.MaxAttempts = tt.attempts })
				req := ask("x")
				req.Background = tt.background
				evs, err := drain(t, m, req)
				var retries []llm.Event
				for _, e := range evs {
					if e.Type == llm.EventRetry {
						retries = append(retries, e)
					}
				}
				if tt.wantErr == "" {
					resp := final(t, evs, err)
					if !strings.HasPrefix(resp.Message().TextContent(), "finally") {
						t.Errorf("answer %q", resp.Message().TextContent())
					}
				} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if got := len(srv.Requests()); got != tt.requests {
					t.Errorf("%d requests, want %d", got, tt.requests)
				}
				if diff := cmp.Diff(tt.waits, w.all()); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
				cause := err
				if len(retries) > 0 {
					cause = retries[0].Retry.Err
				}
				var ae *llm.APIError
				if tt.status != 0 && (!errors.As(cause, &ae) || ae.StatusCode != tt.status || ae.Message == "") {
					t.Errorf("cause %v (%#v), want an API error with status %d", cause, ae, tt.status)
				}
			})
		}
	}
}

// TestErrorMessages: what a user reads for the errors that come as
// something other than the API's JSON.
func TestErrorMessages(t *testing.T) {
	tests := []struct {
		fault fakeapi.Fault
		want  string
	}{
		{fakeapi.Fault{Kind: fakeapi.HTMLError}, "model API error 502: Bad Gateway; response body: <html> <head><title>502 Bad Gateway</title></head>"},
		{fakeapi.Fault{Kind: fakeapi.ErrorBody, Message: "model crashed"}, "model API error 200 server_error: HTTP 200 with an error body instead of an event stream: model crashed"},
		{fakeapi.Fault{Kind: fakeapi.StreamError, Message: "CUDA out of memory"}, "model API error 200 server_error: CUDA out of memory"},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault.Kind), func(t *testing.T) {
			srv := fake(t, fakeapi.Config{Policy: failFirst(9, tt.fault)})
			_, err := drain(t, model(t, srv.URL, Chat, &waits{}, func(c *Config) { c.MaxAttempts = 1 }), ask("x"))
			contains(t, errString(err), tt.want)
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestStalls: a server that stops sending, or sends only keep-alive
// comments, is abandoned after IdleTimeout and the request is sent again.
func TestStalls(t *testing.T) {
	for _, kind := range []fakeapi.FaultKind{fakeapi.Stall, fakeapi.KeepAlive} {
		for _, api := range []API{Chat, Responses} {
			t.Run(string(kind)+"/"+string(api), func(t *testing.T) {
				srv := fake(t, fakeapi.Config{Policy: failFirst(1, fakeapi.Fault{Kind: kind})})
				m := model(t, srv.URL, api, &waits{}, func(c *Config) { c.IdleTimeout = 150 * time.Millisecond })
				evs, err := drain(t, m, ask("x"))
				resp := final(t, evs, err)
				if !strings.HasPrefix(resp.Message().TextContent(), "finally") || len(srv.Requests()) != 2 {
					t.Fatalf("answer %q after %d requests", resp.Message().TextContent(), len(srv.Requests()))
				}
				var retry *llm.RetryInfo
				for _, e := range evs {
					if e.Type == llm.EventRetry {
						retry = e.Retry
					}
				}
				if retry == nil || !errors.Is(retry.Err, ErrStalled) {
					t.Errorf("retry %+v, want one for a stall", retry)
				}
			})
		}
	}
}

// TestCancel: cancelling the context ends a stalled stream at once with
// the context's error, and no retry.
func TestCancel(t *testing.T) {
	srv := fake(t, fakeapi.Config{Policy: failFirst(9, fakeapi.Fault{Kind: fakeapi.Stall})})
	m := model(t, srv.URL, Chat, &waits{}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	for ev, e := range m.Stream(ctx, ask("x")) {
		if e != nil {
			err = e
			break
		}
		if ev.Type == llm.EventStart {
			cancel()
		}
	}
	if err == nil || !strings.Contains(err.Error(), "context canceled") || len(srv.Requests()) != 1 {
		t.Errorf("error %v after %d requests", err, len(srv.Requests()))
	}
}

func TestNoCredentials(t *testing.T) {
	if _, err := New(Config{}); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("OpenAI without a key: %v", err)
	}
	if _, err := New(Config{BaseURL: "localhost:8000"}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("bad base URL: %v", err)
	}
	if _, err := New(Config{BaseURL: "http://x/v1", API: "soap"}); err == nil {
		t.Error("unknown API accepted")
	}
	srv := fake(t, fakeapi.Config{})
	m := model(t, srv.URL, Chat, &waits{}, func(c *Config) { c.APIKey = "" })
	respond(t, m, ask("x"))
	if h := srv.Requests()[0].Request.Header.Get("Authorization"); h != "" {
		t.Errorf("a local server without a key got Authorization %q", h)
	}
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://h/v1"}
	cfg := ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.APIKey != "k" || cfg.BaseURL != "http://h/v1" {
		t.Errorf("ConfigFromEnv = %+v", cfg)
	}
}
