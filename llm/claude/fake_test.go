package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// newFake starts llm/fakeapi with policy and stops it when the test ends.
func newFake(t *testing.T, seed int64, policy fakeapi.Policy) *fakeapi.Server {
	t.Helper()
	srv := fakeapi.New(fakeapi.Config{Policy: policy, Seed: seed})
	t.Cleanup(srv.Close)
	return srv
}

// failFirst fails the first n attempts of each request body with f, then
// answers with reply.
func failFirst(n int, f fakeapi.Fault, reply fakeapi.Reply) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if r.Attempt <= n {
			f := f
			return fakeapi.Reply{Content: reply.Content, Fault: &f}
		}
		return reply
	}
}

func TestFakeText(t *testing.T) {
	srv := newFake(t, 1, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("Hello from the fake, 你好 🙂") })
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	evs, err := run(t, m, simpleRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	resp := doneResponse(t, evs)
	var streamed strings.Builder
	for _, e := range evs {
		if e.Type == llm.EventDelta {
			streamed.WriteString(e.Delta)
		}
	}
	recs := srv.Requests()
	if len(recs) != 1 {
		t.Fatalf("%d requests", len(recs))
	}
	want := &llm.Response{
		ID: recs[0].MessageID, Model: "claude-test", StopReason: llm.StopEndTurn, RequestID: recs[0].RequestID,
		Content: []llm.Block{llm.Text("Hello from the fake, 你好 🙂")},
		Usage:   llm.Usage{InputTokens: int64(recs[0].Usage.InputTokens), OutputTokens: int64(recs[0].Usage.OutputTokens)},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if streamed.String() != resp.Content[0].Text || resp.Usage.InputTokens == 0 || resp.RequestID == "" {
		t.Errorf("deltas %q, usage %+v, request id %q", streamed.String(), resp.Usage, resp.RequestID)
	}
}

// TestFakeToolUseFragmented: the fake splits tool input at arbitrary bytes
// (inside escapes too); for every seed the input arrives whole.
func TestFakeToolUseFragmented(t *testing.T) {
	input := json.RawMessage(`{"file_path":"/tmp/ü \"quoted\" \\ back\\slash\u0001.go","old_string":"line1\nline2\ttab 🙂 \ud83d\ude00","replace_all":true,"n":[1,2.5,{"deep":null}]}`)
	sawSplit := false
	for seed := int64(1); seed <= 8; seed++ {
		srv := newFake(t, seed, func(*fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("Editing."), fakeapi.ToolUseBlock("", "Edit", input)}}
		})
		m := newTestModel(t, srv.URL, &recorder{}, nil)
		evs, err := run(t, m, simpleRequest("edit it"))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		resp := doneResponse(t, evs)
		uses := resp.Message().ToolUses()
		if resp.StopReason != llm.StopToolUse || len(uses) != 1 || uses[0].Name != "Edit" || !strings.HasPrefix(uses[0].ID, "toolu_") {
			t.Fatalf("seed %d: response %+v", seed, resp)
		}
		var got, want any
		if err := json.Unmarshal(uses[0].Input, &got); err != nil {
			t.Fatalf("seed %d: input %s: %v", seed, uses[0].Input, err)
		}
		json.Unmarshal(input, &want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("seed %d: input (-want +got):\n%s", seed, diff)
		}
		var frags []string
		for _, e := range evs {
			if e.Type == llm.EventDelta && e.DeltaKind == llm.DeltaInputJSON {
				frags = append(frags, e.Delta)
			}
		}
		if strings.Join(frags, "") != string(uses[0].Input) {
			t.Errorf("seed %d: fragments %q do not add up to %s", seed, frags, uses[0].Input)
		}
		sawSplit = sawSplit || len(frags) > 2
	}
	if !sawSplit {
		t.Error("no seed split the input into several fragments; the test proves nothing")
	}
}

// TestFakeThinkingRoundTrip sends the thinking block of one response back
// in the next request; the fake receives it byte for byte.
func TestFakeThinkingRoundTrip(t *testing.T) {
	const thought = "The user wants main.go; \"Read\" it first.\nThen answer."
	srv := newFake(t, 3, func(r *fakeapi.Request) fakeapi.Reply {
		if len(r.Messages) == 1 {
			return fakeapi.Reply{Content: []fakeapi.Block{
				fakeapi.ThinkingBlock(thought, ""),
				{Type: "redacted_thinking", Data: "ZW5jcnlwdGVk"},
				fakeapi.ToolUseBlock("", "Read", map[string]string{"file_path": "main.go"}),
			}}
		}
		return fakeapi.TextReply("It is a main package.")
	})
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	req := &llm.Request{Model: "claude-test", MaxTokens: 4096, Thinking: &llm.Thinking{BudgetTokens: 2048},
		Messages: []llm.Message{llm.UserText("What is in main.go?")}}
	first, err := llm.Collect(m.Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	th := first.Content[0]
	if th.Type != llm.BlockThinking || th.Thinking != thought || th.Signature == "" {
		t.Fatalf("thinking block %+v", th)
	}
	use := first.Message().ToolUses()[0]
	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult(use.ID, "package main", false)}})
	second, err := llm.Collect(m.Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if second.Message().TextContent() != "It is a main package." {
		t.Errorf("second answer %+v", second)
	}
	recs := srv.Requests()
	got := recs[1].Request.Messages[1].Content
	want := []fakeapi.Block{
		{Type: "thinking", Thinking: thought, Signature: th.Signature},
		{Type: "redacted_thinking", Data: "ZW5jcnlwdGVk"},
		{Type: "tool_use", ID: use.ID, Name: "Read", Input: json.RawMessage(`{"file_path":"main.go"}`)},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(fakeapi.Block{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".raw"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("assistant turn as the fake received it (-want +got):\n%s", diff)
	}
	if string(recs[1].Request.Thinking) != `{"budget_tokens":2048,"type":"enabled"}` {
		t.Errorf("thinking config %s", recs[1].Request.Thinking)
	}
}

// TestFakeCacheUsage: cache markers reach the fake, whose simulator reports
// a write on the first request and a read on the second.
func TestFakeCacheUsage(t *testing.T) {
	srv := newFake(t, 1, nil)
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	req := &llm.Request{Model: "claude-test", MaxTokens: 1024,
		System:   []llm.Block{{Type: llm.BlockText, Text: strings.Repeat("A long, stable system prompt. ", 400), Cache: true}},
		Messages: []llm.Message{llm.UserText("hi")}}
	first, err := llm.Collect(m.Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	second, err := llm.Collect(m.Stream(t.Context(), req))
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.CacheCreationInputTokens == 0 || second.Usage.CacheReadInputTokens != first.Usage.CacheCreationInputTokens {
		t.Errorf("usage first %+v second %+v: want a write then a read of the same size", first.Usage, second.Usage)
	}
}

// faultCase is one injected failure and the behaviour it must cause.
type faultCase struct {
	name       string
	policy     fakeapi.Policy
	background bool
	attempts   int // MaxAttempts; 0 = default
	jitter     []float64
	wantErr    string // "" = the stream must succeed
	wantStatus int    // status of the *llm.APIError in the error or the retries
	requests   int
	waits      []time.Duration
}

func TestFakeFaults(t *testing.T) {
	ok := fakeapi.TextReply("finally")
	always := func(f fakeapi.Fault) fakeapi.Policy { return failFirst(1<<30, f, ok) }
	tests := []faultCase{
		{name: "429 retry-after", policy: failFirst(1, fakeapi.Fault{Kind: fakeapi.RateLimited, RetryAfter: "7"}, ok),
			wantStatus: 429, requests: 2, waits: []time.Duration{7 * time.Second}},
		{name: "429 retry-after-ms", policy: failFirst(2, fakeapi.Fault{Kind: fakeapi.RateLimited, RetryAfterMs: "1500", RetryAfter: "2"}, ok),
			wantStatus: 429, requests: 3, waits: []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}},
		{name: "429 retry-after over a minute", policy: failFirst(1, fakeapi.Fault{Kind: fakeapi.RateLimited, RetryAfter: "600"}, ok),
			wantStatus: 429, requests: 2, waits: []time.Duration{time.Minute}},
		{name: "529 foreground", policy: failFirst(2, fakeapi.Fault{Kind: fakeapi.Overloaded}, ok), jitter: []float64{0, 0},
			wantStatus: 529, requests: 3, waits: []time.Duration{500 * time.Millisecond, time.Second}},
		{name: "529 background", policy: always(fakeapi.Fault{Kind: fakeapi.Overloaded}), background: true,
			wantErr: "model API error 529 overloaded_error", wantStatus: 529, requests: 1},
		{name: "500 exponential with jitter", policy: always(fakeapi.Fault{Kind: fakeapi.ServerError}), attempts: 5,
			jitter:  []float64{0.2, 0.4, 0.8, 0.999},
			wantErr: "giving up after 5 attempts: model API error 500 api_error", wantStatus: 500, requests: 5,
			waits: []time.Duration{525 * time.Millisecond, 1100 * time.Millisecond, 2400 * time.Millisecond, 4*time.Second + 999*time.Millisecond}},
		{name: "500 in the background still retried", policy: failFirst(1, fakeapi.Fault{Kind: fakeapi.ServerError}, ok), background: true,
			wantStatus: 500, requests: 2, waits: []time.Duration{500 * time.Millisecond}},
		{name: "400", policy: always(fakeapi.Fault{Kind: fakeapi.BadRequest}), wantErr: "model API error 400 invalid_request_error", wantStatus: 400, requests: 1},
		{name: "401", policy: always(fakeapi.Fault{Kind: fakeapi.Unauthorized}), wantErr: "401 authentication_error", wantStatus: 401, requests: 1},
		{name: "403", policy: always(fakeapi.Fault{Kind: fakeapi.PermissionDenied}), wantErr: "403 permission_error", wantStatus: 403, requests: 1},
		{name: "404", policy: always(fakeapi.Fault{Kind: fakeapi.BadRequest, Status: 404, Type: "not_found_error"}), wantErr: "404 not_found_error", wantStatus: 404, requests: 1},
		{name: "413", policy: always(fakeapi.Fault{Kind: fakeapi.BadRequest, Status: 413, Type: "request_too_large"}), wantErr: "413 request_too_large", wantStatus: 413, requests: 1},
		{name: "402 billing", policy: always(fakeapi.Fault{Kind: fakeapi.Billing}), wantErr: "402 billing_error", wantStatus: 402, requests: 1},
		{name: "429 spend limit", policy: always(fakeapi.Fault{Kind: fakeapi.SpendLimit}), wantErr: "429 rate_limit_error: fakeapi: spend limit", wantStatus: 429, requests: 1},
		{name: "429 spend limit, own message", policy: always(fakeapi.Fault{Kind: fakeapi.SpendLimit, Message: "Your organization is out of budget."}),
			wantErr: "out of budget", wantStatus: 429, requests: 1},
		{name: "mid-stream error retried whole", policy: failFirst(1, fakeapi.Fault{Kind: fakeapi.StreamError}, ok),
			wantStatus: 200, requests: 2, waits: []time.Duration{500 * time.Millisecond}},
		{name: "mid-stream api_error retried", policy: failFirst(2, fakeapi.Fault{Kind: fakeapi.StreamError, Type: "api_error"}, ok),
			wantStatus: 200, requests: 3, waits: []time.Duration{500 * time.Millisecond, time.Second}},
		{name: "mid-stream overloaded in the background", policy: always(fakeapi.Fault{Kind: fakeapi.StreamError}), background: true,
			wantErr: "model API error 200 overloaded_error: Overloaded", wantStatus: 200, requests: 1},
		{name: "mid-stream invalid request not retried", policy: always(fakeapi.Fault{Kind: fakeapi.StreamError, Type: "invalid_request_error"}),
			wantErr: "200 invalid_request_error", wantStatus: 200, requests: 1},
		{name: "exhaustion returns the last error", policy: always(fakeapi.Fault{Kind: fakeapi.Overloaded, Message: "still busy"}), attempts: 3,
			wantErr: "giving up after 3 attempts: model API error 529 overloaded_error: still busy (request req_fake", wantStatus: 529, requests: 3,
			waits: []time.Duration{500 * time.Millisecond, time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkFault(t, tt)
		})
	}
}

func checkFault(t *testing.T, tt faultCase) {
	srv := newFake(t, 5, tt.policy)
	rec := &recorder{jitter: tt.jitter}
	m := newTestModel(t, srv.URL, rec, func(c *Config) { c.MaxAttempts = tt.attempts })
	req := simpleRequest("hello")
	req.Background = tt.background
	evs, err := run(t, m, req)
	statusErr := err
	for _, e := range evs {
		if e.Type == llm.EventRetry && statusErr == nil {
			statusErr = e.Retry.Err
		}
	}
	if tt.wantErr == "" {
		if err != nil {
			t.Fatalf("stream failed: %v", err)
		}
		if got := doneResponse(t, evs).Message().TextContent(); got != "finally" {
			t.Errorf("final text %q", got)
		}
	} else {
		if err == nil {
			t.Fatalf("stream succeeded; want error %q", tt.wantErr)
		}
		mustContain(t, err.Error(), tt.wantErr)
	}
	var ae *llm.APIError
	if !errors.As(statusErr, &ae) || ae.StatusCode != tt.wantStatus || ae.RequestID == "" {
		t.Errorf("error %v: want an *llm.APIError with status %d and a request id", statusErr, tt.wantStatus)
	}
	if got := len(srv.Requests()); got != tt.requests {
		t.Errorf("%d requests, want %d", got, tt.requests)
	}
	if diff := cmp.Diff(tt.waits, rec.recorded()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	checkRetryEvents(t, evs, rec.recorded())
}

// checkRetryEvents checks that every retry event numbers its attempt and
// announces the wait that followed, and that only the last attempt's
// content ends in EventDone.
func checkRetryEvents(t *testing.T, evs []llm.Event, waits []time.Duration) {
	t.Helper()
	n, dones := 0, 0
	for _, e := range evs {
		switch e.Type {
		case llm.EventRetry:
			if e.Retry.Attempt != n+2 || n >= len(waits) || e.Retry.Wait != waits[n] || e.Retry.Err == nil {
				t.Errorf("retry event %d: %+v", n, e.Retry)
			}
			n++
		case llm.EventDone:
			dones++
		}
	}
	if n != len(waits) || dones > 1 {
		t.Errorf("%d retry events for %d waits, %d done events", n, len(waits), dones)
	}
}

// TestFakeCutConnection: the fake hijacks and closes the connection part-way
// through the first attempt; the consumer sees partial events, a retry, and
// then one complete message, never a half one.
func TestFakeCutConnection(t *testing.T) {
	text := strings.Repeat("All work and no play. ", 40)
	srv := newFake(t, 9, failFirst(1, fakeapi.Fault{Kind: fakeapi.CutConnection}, fakeapi.Reply{Content: []fakeapi.Block{
		fakeapi.TextBlock(text), fakeapi.ToolUseBlock("", "Bash", map[string]string{"command": "make"})}}))
	rec := &recorder{}
	m := newTestModel(t, srv.URL, rec, nil)
	evs, err := run(t, m, simpleRequest("build"))
	if err != nil {
		t.Fatal(err)
	}
	retryAt := -1
	var partial strings.Builder
	for i, e := range evs {
		if e.Type == llm.EventRetry {
			retryAt = i
			break
		}
		if e.Type == llm.EventDone {
			t.Fatal("EventDone before the retry")
		}
		if e.Type == llm.EventDelta && e.Index == 0 {
			partial.WriteString(e.Delta)
		}
	}
	if retryAt < 0 || partial.Len() == 0 || partial.Len() >= len(text) {
		t.Fatalf("want partial text (%d of %d bytes) then a retry; events %v", partial.Len(), len(text), eventTypes(evs))
	}
	if !strings.Contains(evs[retryAt].Retry.Err.Error(), "connection to the API failed") {
		t.Errorf("retry cause %v", evs[retryAt].Retry.Err)
	}
	resp := doneResponse(t, evs)
	if resp.Message().TextContent() != text || len(resp.Message().ToolUses()) != 1 {
		t.Errorf("final response %+v", resp)
	}
	if got := len(srv.Requests()); got != 2 {
		t.Errorf("%d requests", got)
	}
}

// TestFakeSlowFirstTokenCancel cancels while the fake holds back the first
// token for an hour: the stream ends at once with the context's error.
func TestFakeSlowFirstTokenCancel(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := newFake(t, 1, func(r *fakeapi.Request) fakeapi.Reply {
		arrived <- struct{}{}
		return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("late")}, FirstTokenDelay: time.Hour}
	})
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := llm.Collect(m.Stream(ctx, simpleRequest("hi")))
		done <- err
	}()
	<-arrived
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return after cancellation")
	}
	if got := len(srv.Requests()); got != 1 {
		t.Errorf("%d requests, want 1", got)
	}
}

// TestFakeAuthToken sends a bearer token the fake checks.
func TestFakeAuthToken(t *testing.T) {
	srv := fakeapi.New(fakeapi.Config{APIKey: "tok-123"})
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name string
		cfg  Config
		err  string
	}{
		{"token", Config{AuthToken: "tok-123"}, ""},
		{"key", Config{APIKey: "tok-123"}, ""},
		{"wrong token", Config{AuthToken: "nope"}, "401 authentication_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.BaseURL = srv.URL
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = llm.Collect(m.Stream(t.Context(), simpleRequest("hi")))
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// TestFakeConcurrent runs several streams on one Model at once; each gets
// the reply to its own conversation.
func TestFakeConcurrent(t *testing.T) {
	srv := newFake(t, 4, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Attempt == 1 && strings.HasSuffix(r.Messages[0].Content[0].Text, "3") {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.StreamError}, Content: []fakeapi.Block{fakeapi.TextBlock("partial answer")}}
		}
		return fakeapi.TextReply("echo: " + r.Messages[0].Content[0].Text)
	})
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	const n = 8
	got := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			resp, err := llm.Collect(m.Stream(t.Context(), simpleRequest(fmt.Sprintf("agent %d", i))))
			if err != nil {
				errs[i] = err
				return
			}
			got[i] = resp.Message().TextContent()
		})
	}
	wg.Wait()
	for i := range n {
		if want := fmt.Sprintf("echo: agent %d", i); errs[i] != nil || got[i] != want {
			t.Errorf("stream %d: %q, %v; want %q", i, got[i], errs[i], want)
		}
	}
}
