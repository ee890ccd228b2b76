package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

// TestStreamMixed reads a canned stream with thinking, text, two tool calls
// and redacted thinking, interleaved with a ping, a comment, an unknown event
// type and an unknown delta type, which are ignored.
func TestStreamMixed(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeSSE(w, readTestdata(t, "mixed.sse"))
	})
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	evs, err := run(t, m, simpleRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	type delta struct {
		Index int
		Kind  llm.DeltaKind
		Text  string
	}
	var deltas []delta
	for _, e := range evs {
		if e.Type == llm.EventDelta {
			deltas = append(deltas, delta{e.Index, e.DeltaKind, e.Delta})
		}
	}
	wantDeltas := []delta{
		{0, llm.DeltaThinking, "Let me look "}, {0, llm.DeltaThinking, "at the file."}, {0, llm.DeltaSignature, "EqQBCkYIBxgCKkB="},
		{1, llm.DeltaText, "I'll read "}, {1, llm.DeltaText, "it."},
		{2, llm.DeltaInputJSON, ""}, {2, llm.DeltaInputJSON, `{"file_`}, {2, llm.DeltaInputJSON, `path": "main.go"}`},
	}
	if diff := cmp.Diff(wantDeltas, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if evs[0].Type != llm.EventStart || evs[0].Usage.CacheReadInputTokens != 2000 {
		t.Errorf("first event %+v, want start with usage", evs[0])
	}
	if b := evs[1].Block; evs[1].Type != llm.EventBlockStart || b == nil || b.Type != llm.BlockThinking {
		t.Errorf("second event %+v, want the thinking block's start", evs[1])
	}
	want := &llm.Response{
		ID: "msg_mixed", Model: "claude-test", StopReason: llm.StopToolUse, RequestID: "req_raw",
		Usage: llm.Usage{InputTokens: 12, OutputTokens: 57, CacheCreationInputTokens: 100, CacheReadInputTokens: 2000},
		Content: []llm.Block{
			{Type: llm.BlockThinking, Thinking: "Let me look at the file.", Signature: "EqQBCkYIBxgCKkB="},
			llm.Text("I'll read it."),
			llm.ToolUse("toolu_01", "Read", json.RawMessage(`{"file_path": "main.go"}`)),
			llm.ToolUse("toolu_02", "Glob", json.RawMessage(`{}`)),
			{Type: llm.BlockRedactedThinking, Data: "opaque=="},
		},
	}
	if diff := cmp.Diff(want, doneResponse(t, evs)); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

// TestStreamBadInput feeds malformed responses through the real SDK: each
// gives a clear error, retried only where a retry can help.
func TestStreamBadInput(t *testing.T) {
	head := sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`)
	tests := []struct {
		name     string
		handle   func(w http.ResponseWriter)
		want     string
		sentinel error
		requests int
	}{
		{"truncated event JSON", func(w http.ResponseWriter) { writeSSE(w, readTestdata(t, "truncated_json.sse")) },
			"malformed response stream", ErrProtocol, 1},
		{"event data not JSON", func(w http.ResponseWriter) { writeSSE(w, "event: message_start\ndata: hello there\n\n") },
			"malformed response stream", ErrProtocol, 1},
		{"tool input not JSON", func(w http.ResponseWriter) { writeSSE(w, readTestdata(t, "broken_tool_input.sse")) },
			`tool_use input of content block 0 is not valid JSON`, ErrProtocol, 1},
		{"content before message_start", func(w http.ResponseWriter) {
			writeSSE(w, sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`))
		}, "content_block_start arrived before message_start", ErrProtocol, 1},
		{"block index gap", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`))
		}, "expected index 0", ErrProtocol, 1},
		{"delta for a missing block", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`))
		}, "only 0 content blocks", ErrProtocol, 1},
		{"delta of the wrong kind", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`)+
				sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`))
		}, "text_delta for content block 0, which is a thinking block", ErrProtocol, 1},
		{"delta after the block stopped", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Read","input":{}}}`)+
				sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`)+
				sse("content_block_stop", `{"type":"content_block_stop","index":0}`)+
				sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" "}}`))
		}, "content_block_delta for content block 0 after its content_block_stop", ErrProtocol, 1},
		{"a block stopped twice", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"x"}}`)+
				sse("content_block_stop", `{"type":"content_block_stop","index":0}`)+sse("content_block_stop", `{"type":"content_block_stop","index":0}`))
		}, "content_block_stop for content block 0 after its content_block_stop", ErrProtocol, 1},
		{"two message starts", func(w http.ResponseWriter) { writeSSE(w, head+head) }, "second message_start", ErrProtocol, 1},
		{"unsupported block type", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"code_execution_tool_result","tool_use_id":"s","content":{}}}`))
		}, `"code_execution_tool_result"`, ErrProtocol, 1},
		{"web search result of the wrong shape", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"web_search_tool_result","tool_use_id":"s","content":"nope"}}`))
		}, "web_search_tool_result content is neither", ErrProtocol, 1},
		{"garbage lines only", func(w http.ResponseWriter) { writeSSE(w, "hello\nworld\n\n:::\n\n") },
			"ended before message_stop", llm.ErrIncomplete, 2},
		{"empty body", func(w http.ResponseWriter) { writeSSE(w, "") }, "ended before message_stop", llm.ErrIncomplete, 2},
		{"html page with 200", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>Login to the proxy</body></html>")
		}, `content-type "text/html" instead of an event stream; body starts: "<html><body>Login to the proxy</body></html>"`, ErrProtocol, 1},
		{"html 502", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html><body>Bad gateway</body></html>")
		}, "model API error 502: Bad Gateway; response body: <html><body>Bad gateway</body></html>", nil, 2},
		{"html 400", func(w http.ResponseWriter) {
			w.WriteHeader(400)
			io.WriteString(w, "<h1>no</h1>")
		}, "400", nil, 1},
		{"json error without message", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			io.WriteString(w, `{"unexpected":"shape"}`)
		}, `Not Found; response body: {"unexpected":"shape"}`, nil, 1},
		{"error event mid-stream", func(w http.ResponseWriter) {
			writeSSE(w, head+sse("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
		}, "model API error 200 overloaded_error: Overloaded (request req_raw)", nil, 2},
		{"error event not JSON", func(w http.ResponseWriter) { writeSSE(w, head+"event: error\ndata: {oops\n\n") },
			"model API error 200", nil, 2},
		{"cut mid-event", func(w http.ResponseWriter) {
			w.Header().Set("Content-Length", "100000")
			writeSSE(w, head+`event: content_block_start\ndata: {"type":"content_blo`)
		}, "connection to the API failed", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { tt.handle(w) })
			rec := &recorder{}
			m := newTestModel(t, srv.URL, rec, func(c *Config) { c.MaxAttempts = 2 })
			evs, err := run(t, m, simpleRequest("hi"))
			if err == nil {
				t.Fatalf("no error; events %v", eventTypes(evs))
			}
			mustContain(t, err.Error(), tt.want)
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tt.sentinel)
			}
			if got := srv.requests(); got != tt.requests {
				t.Errorf("%d requests, want %d (%v)", got, tt.requests, err)
			}
			for _, e := range evs {
				if e.Type == llm.EventDone {
					t.Errorf("a failed stream yielded EventDone")
				}
			}
		})
	}
}

// TestStreamCutThenComplete: the first attempt is cut before message_stop,
// the second completes; the consumer sees the retry and one whole message.
func TestStreamCutThenComplete(t *testing.T) {
	full := textStream("hello world")
	half := full[:strings.Index(full, "event: content_block_stop")]
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeSSE(w, half) // the handler returns: a clean end without message_stop
			return
		}
		writeSSE(w, full)
	})
	rec := &recorder{jitter: []float64{0.5}}
	m := newTestModel(t, srv.URL, rec, nil)
	evs, err := run(t, m, simpleRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.EventType{
		llm.EventStart, llm.EventBlockStart, llm.EventDelta, llm.EventRetry,
		llm.EventStart, llm.EventBlockStart, llm.EventDelta, llm.EventBlockStop, llm.EventDone,
	}
	if diff := cmp.Diff(want, eventTypes(evs)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	retry := evs[3].Retry
	if retry.Attempt != 2 || !errors.Is(retry.Err, llm.ErrIncomplete) || retry.Wait != 562500*time.Microsecond {
		t.Errorf("retry %+v, want attempt 2 after 562.5ms for an incomplete stream", retry)
	}
	if diff := cmp.Diff([]time.Duration{562500 * time.Microsecond}, rec.recorded()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if got := doneResponse(t, evs).Message().TextContent(); got != "hello world" {
		t.Errorf("text %q", got)
	}
}

// TestStreamStopEarly stops consuming after the first delta: the connection
// is released (goleak in TestMain checks nothing is left running).
func TestStreamStopEarly(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeSSE(w, textStream("abc")) })
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	var seen []llm.EventType
	for ev, err := range m.Stream(t.Context(), simpleRequest("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ev.Type)
		if ev.Type == llm.EventDelta {
			break
		}
	}
	if diff := cmp.Diff([]llm.EventType{llm.EventStart, llm.EventBlockStart, llm.EventDelta}, seen); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestStreamCancelBeforeHeaders cancels while the server has not answered:
// the stream ends with the context's error and no retry.
func TestStreamCancelBeforeHeaders(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	m := newTestModel(t, srv.URL, &recorder{}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
		}
		cancel()
	}()
	evs, err := llm.Collect(m.Stream(ctx, simpleRequest("hi")))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled (events %v)", err, evs)
	}
	if srv.requests() != 1 {
		t.Errorf("%d requests after cancellation, want 1", srv.requests())
	}
}

func TestStreamSleepCancelled(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(500) })
	ctx, cancel := context.WithCancel(t.Context())
	m := newTestModel(t, srv.URL, &recorder{}, func(c *Config) {
		c.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	})
	_, err := llm.Collect(m.Stream(ctx, simpleRequest("hi")))
	if !errors.Is(err, context.Canceled) || srv.requests() != 1 {
		t.Fatalf("err = %v after %d requests; want context.Canceled after 1", err, srv.requests())
	}
}

func TestStreamRequestErrorBeforeSending(t *testing.T) {
	m := newTestModel(t, "http://127.0.0.1:1", &recorder{}, nil)
	_, err := llm.Collect(m.Stream(t.Context(), &llm.Request{Model: "m", Tools: []llm.ToolDef{{Name: "T", InputSchema: json.RawMessage("{")}}}))
	mustContain(t, err.Error(), "tool 0 (T): input schema")
}

// TestStreamConnectionRefusedFailsFastAtFirstContact is issue 17 item 11:
// nothing listens at a base URL the user chose, and nothing ever answered
// there: the first refused connection fails at once, naming the URL,
// instead of ten attempts and two minutes of silence.
func TestStreamConnectionRefusedFailsFastAtFirstContact(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {})
	url := srv.URL
	srv.Close()
	rec := &recorder{}
	m := newTestModel(t, url, rec, nil)
	evs, err := run(t, m, simpleRequest("hi"))
	if err == nil {
		t.Fatal("no error")
	}
	mustContain(t, err.Error(), "nothing listens at "+url+" (connection refused)")
	if len(rec.recorded()) != 0 || len(evs) != 0 {
		t.Fatalf("waits %v, events %v; want none (fail fast)", rec.recorded(), eventTypes(evs))
	}
}

// TestStreamRetriesAreReportedAsTheyHappen: once the server has answered,
// a refused connection is retried (a server restarting), and every retry is
// an EventRetry carrying the attempt, the most attempts, the wait, the
// error and the URL, yielded before its wait.
func TestStreamRetriesAreReportedAsTheyHappen(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeSSE(w, textStream("hello")) })
	url := srv.URL
	rec := &recorder{}
	var evs []llm.Event
	m := newTestModel(t, url, rec, func(c *Config) {
		c.MaxAttempts = 3
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventRetry || evs[len(evs)-1].Retry.Wait != d {
				t.Errorf("wait of %s before its retry event was yielded", d)
			}
			return rec.sleep(ctx, d)
		}
	})
	if _, err := run(t, m, simpleRequest("hi")); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	var err error
	for ev, e := range m.Stream(t.Context(), simpleRequest("again")) {
		if e != nil {
			err = e
			break
		}
		evs = append(evs, ev)
	}
	mustContain(t, fmt.Sprint(err), "giving up after 3 attempts: claude: connection to the API failed")
	if len(evs) != 2 {
		t.Fatalf("events %v; want two retries", eventTypes(evs))
	}
	r := evs[1].Retry
	if r.Attempt != 3 || r.MaxAttempts != 3 || r.Wait != time.Second || r.URL != url || r.Status != 0 || r.Err == nil {
		t.Fatalf("second retry: %+v", r)
	}
	if got, want := r.String(), "API unreachable at "+url+" (connection refused); retry 3/3 in 1 s"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}

// TestStreamRetryTimeIsCapped: with MaxRetryTime, retries stop once the
// next wait would end past the cap, however many attempts are left.
func TestStreamRetryTimeIsCapped(t *testing.T) {
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(529)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`)
	})
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	rec := &recorder{}
	m := newTestModel(t, srv.URL, rec, func(c *Config) {
		c.MaxRetryTime = 3 * time.Second
		c.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		c.Sleep = func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			now = now.Add(d)
			mu.Unlock()
			return rec.sleep(ctx, d)
		}
	})
	evs, err := run(t, m, simpleRequest("hi"))
	// Waits 0.5 s and 1 s fit in 3 s; the next (2 s) would end at 3.5 s.
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond, time.Second}, rec.recorded()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	mustContain(t, fmt.Sprint(err), "giving up after 3 attempts in 1.5s (the retry time is capped at 3s)")
	if len(evs) != 2 || evs[0].Retry.Status != 529 || !strings.Contains(evs[0].Retry.String(), "API error at "+srv.URL+" (529 Overloaded); retry 2/10 in 0.5 s") {
		t.Fatalf("events: %v %v", eventTypes(evs), evs)
	}
}
