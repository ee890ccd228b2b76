package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHTTPFaults(t *testing.T) {
	tests := []struct {
		fault       Fault
		status      int
		errType     string
		shouldRetry string
		retryAfter  string
		retryMs     string
	}{
		{Fault{Kind: RateLimited, RetryAfter: "3", RetryAfterMs: "2500"}, 429, "rate_limit_error", "true", "3", "2500"},
		{Fault{Kind: SpendLimit}, 429, "rate_limit_error", "false", "", ""},
		{Fault{Kind: Overloaded}, 529, "overloaded_error", "true", "", ""},
		{Fault{Kind: ServerError}, 500, "api_error", "true", "", ""},
		{Fault{Kind: BadRequest, Message: "nope"}, 400, "invalid_request_error", "", "", ""},
		{Fault{Kind: Unauthorized}, 401, "authentication_error", "", "", ""},
		{Fault{Kind: PermissionDenied}, 403, "permission_error", "", "", ""},
		{Fault{Kind: Billing}, 402, "billing_error", "", "", ""},
		{Fault{Kind: ServerError, Status: 503, Type: "api_error"}, 503, "api_error", "true", "", ""},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault.Kind), func(t *testing.T) {
			f := tt.fault
			srv := start(t, Config{Policy: func(*Request) Reply { return Reply{Fault: &f} }})
			res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi")))
			var e wireErrorBody
			if err := json.Unmarshal(res.Body, &e); err != nil {
				t.Fatalf("body %s: %v", res.Body, err)
			}
			got := []string{res.Header.Get("x-should-retry"), res.Header.Get("retry-after"), res.Header.Get("retry-after-ms"), e.Type, e.Error.Type}
			want := []string{tt.shouldRetry, tt.retryAfter, tt.retryMs, "error", tt.errType}
			if diff := cmp.Diff(want, got); diff != "" || res.Status != tt.status {
				t.Errorf("status %d (want %d); headers and body (-want +got):\n%s", res.Status, tt.status, diff)
			}
			if e.Error.Message == "" || e.RequestID != res.Header.Get("request-id") || e.RequestID == "" {
				t.Errorf("error body %+v, request-id header %q", e, res.Header.Get("request-id"))
			}
			rec := srv.Requests()[0]
			if rec.Status != tt.status || rec.Fault != f.Kind || rec.MessageID != "" {
				t.Errorf("recorded %+v", rec)
			}
			if st := srv.CacheStats(); st.Hits+st.Misses+st.Writes != 0 {
				t.Errorf("a failed request touched the cache: %+v", st)
			}
		})
	}
}

func longReply() Reply {
	return Reply{Content: []Block{
		TextBlock(strings.Repeat("streaming text ", 40)),
		ToolUseBlock("", "Bash", map[string]any{"command": "ls -la"}),
	}}
}

func TestStreamError(t *testing.T) {
	r := longReply()
	r.Fault = &Fault{Kind: StreamError}
	srv := start(t, Config{Policy: func(*Request) Reply { return r }})
	res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi")))
	if res.Status != 200 || res.ReadErr != nil {
		t.Fatalf("status %d, read error %v", res.Status, res.ReadErr)
	}
	evs, err := readSSE(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, evs)
	if d.Stopped || d.StopReason != "" {
		t.Error("a failed stream carried message_delta or message_stop")
	}
	if len(d.Blocks) == 0 || d.Text[0] == "" {
		t.Error("no content arrived before the error")
	}
	if evs[len(evs)-1].Name != "error" || d.ErrorEvent["type"] != "overloaded_error" || d.ErrorEvent["message"] == "" {
		t.Errorf("last event %s %v", evs[len(evs)-1].Name, d.ErrorEvent)
	}
	if rec := srv.Requests()[0]; rec.Fault != StreamError || rec.Error == "" || rec.Status != 200 {
		t.Errorf("recorded %+v", rec)
	}
}

func TestCutConnection(t *testing.T) {
	r := longReply()
	r.Fault = &Fault{Kind: CutConnection}
	srv := start(t, Config{Policy: func(*Request) Reply { return r }})
	res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi")))
	if res.Status != 200 {
		t.Fatalf("status %d", res.Status)
	}
	if !errors.Is(res.ReadErr, io.ErrUnexpectedEOF) {
		t.Fatalf("reading a cut stream ended with %v, want unexpected EOF", res.ReadErr)
	}
	evs, _ := readSSE(bytes.NewReader(res.Body))
	d := decode(t, evs)
	if d.Stopped || len(d.Blocks) == 0 {
		t.Errorf("cut stream: stopped=%v, %d blocks before the cut", d.Stopped, len(d.Blocks))
	}
	// The server keeps serving after a cut.
	if again := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi"))); !errors.Is(again.ReadErr, io.ErrUnexpectedEOF) {
		t.Errorf("second cut: %v", again.ReadErr)
	}
}

// TestFaultAfterBlocks: a mid-stream fault with AfterBlocks comes right
// after that many complete blocks and the start of the next, for every
// kind of block before it.
func TestFaultAfterBlocks(t *testing.T) {
	for _, kind := range []FaultKind{CutConnection, StreamError} {
		t.Run(string(kind), func(t *testing.T) {
			var blocks []Block
			for i := range 5 {
				blocks = append(blocks, ToolUseBlock("", "Agent", map[string]any{"prompt": strings.Repeat(fmt.Sprint(i), 300)}))
			}
			r := Reply{Content: append([]Block{TextBlock("Starting five.")}, blocks...), Fault: &Fault{Kind: kind, AfterBlocks: 3}}
			srv := start(t, Config{Policy: func(*Request) Reply { return r }})
			res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi")))
			evs, _ := readSSE(bytes.NewReader(res.Body))
			var starts, stops, afterLastStop int
			for _, ev := range evs {
				switch ev.Name {
				case "content_block_start":
					starts++
				case "content_block_stop":
					stops++
					afterLastStop = 0
				case "content_block_delta":
					afterLastStop++
				}
			}
			if starts != 4 || stops != 3 || afterLastStop != 1 {
				t.Fatalf("%d blocks started, %d stopped, %d deltas after the last stop; want 4, 3 and 1", starts, stops, afterLastStop)
			}
			if d := decode(t, evs); d.Stopped {
				t.Fatal("the faulted stream carried message_stop")
			}
		})
	}
}

func TestAttemptLetsPolicyFailFirstTries(t *testing.T) {
	srv := start(t, Config{Policy: func(r *Request) Reply {
		if r.Attempt < 3 {
			return Reply{Fault: &Fault{Kind: Overloaded}}
		}
		return TextReply("finally")
	}})
	c := httpClient(t)
	var statuses []int
	for range 3 {
		statuses = append(statuses, call(t, c, srv.URL, "/v1/messages", body(user("same body"))).Status)
	}
	statuses = append(statuses, call(t, c, srv.URL, "/v1/messages", body(user("other body"))).Status)
	if diff := cmp.Diff([]int{529, 529, 200, 529}, statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	var attempts []int
	for _, r := range srv.Requests() {
		attempts = append(attempts, r.Request.Attempt)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 1}, attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
}

func TestSlowFirstTokenEndsWithClient(t *testing.T) {
	entered := make(chan struct{})
	srv := start(t, Config{Policy: func(*Request) Reply {
		close(entered)
		return Reply{Content: []Block{TextBlock("late")}, FirstTokenDelay: time.Hour}
	}})
	ctx, cancel := context.WithCancel(t.Context())
	raw, _ := json.Marshal(body(user("hi")))
	req, _ := newRequest(t, srv.URL+"/v1/messages", raw)
	req = req.WithContext(ctx)
	done := make(chan error, 1)
	go func() {
		resp, err := httpClient(t).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client error %v, want context.Canceled", err)
	}
	// Close waits for the handler, which must notice the client left.
	srv.Close()
	rec := srv.Requests()[0]
	if rec.Status != 0 || rec.MessageID != "" || !strings.Contains(rec.Error, "cancelled") {
		t.Errorf("recorded %+v", rec)
	}
}

func TestCloseEndsBlockedRequests(t *testing.T) {
	entered := make(chan struct{}, 2)
	srv := New(Config{Policy: func(r *Request) Reply {
		entered <- struct{}{}
		if r.Index == 1 {
			<-r.Context().Done() // a policy blocked until the server closes
			return TextReply("never sent")
		}
		return Reply{Content: []Block{TextBlock("slow")}, FirstTokenDelay: time.Hour}
	}})
	c := httpClient(t)
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			raw, _ := json.Marshal(body(user(strings.Repeat("x", i+1))))
			req, _ := newRequest(t, srv.URL+"/v1/messages", raw)
			resp, err := c.Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	<-entered
	<-entered
	srv.Close() // must return: both handlers see their context end
	for range 2 {
		<-errs // the clients see an error or an empty response; either is fine
	}
}

func TestWaitHonoursDelayAndCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !wait(t.Context(), 3*time.Second) || time.Since(start) != 3*time.Second {
			t.Errorf("wait returned after %v", time.Since(start))
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if wait(ctx, time.Hour) || time.Since(start) != time.Second {
			t.Errorf("cancelled wait returned after %v", time.Since(start))
		}
	})
}

func TestUnusableReplies(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		want   string
	}{
		{"panic", func(*Request) Reply { panic("boom") }, "policy panicked: boom"},
		{"nameless tool", func(*Request) Reply { return Reply{Content: []Block{{Type: "tool_use"}}} }, "tool_use without a name"},
		{"bad input", func(*Request) Reply { return ToolReply("", "Bash", json.RawMessage(`[1]`)) }, "not a JSON object"},
		{"image", func(*Request) Reply { return Reply{Content: []Block{{Type: "image"}}} }, `cannot stream "image"`},
		{"unknown fault", func(*Request) Reply { return Reply{Fault: &Fault{Kind: "meteor"}} }, `unknown fault kind "meteor"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, Config{Policy: tt.policy})
			res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi")))
			var e wireErrorBody
			json.Unmarshal(res.Body, &e)
			if res.Status != 500 || !strings.Contains(e.Error.Message, tt.want) || e.Error.Type != "api_error" {
				t.Errorf("%d %s", res.Status, res.Body)
			}
		})
	}
}
