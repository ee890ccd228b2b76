package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// rawServer answers every request with handle, for what no well-behaved
// server (and so not the fake) sends. It counts the requests.
func rawServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// sse writes data lines as an event stream.
func sse(w http.ResponseWriter, lines ...string) {
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("x-request-id", "req_raw")
	for _, l := range lines {
		io.WriteString(w, "data: "+l+"\n\n")
	}
	w.(http.Flusher).Flush()
}

const head = `{"id":"c1","object":"chat.completion.chunk","model":"raw","choices":[{"index":0,"delta":`

func chunk(delta, finish string) string {
	if finish == "" {
		finish = "null"
	} else {
		finish = `"` + finish + `"`
	}
	return head + delta + `,"finish_reason":` + finish + `}]}`
}

func TestRawChat(t *testing.T) {
	tests := []struct {
		name    string
		lines   []string
		want    []llm.Block
		stop    llm.StopReason
		usage   llm.Usage
		wantErr string
		tries   int32
	}{
		{
			name: "calls named by id, without an index",
			lines: []string{
				chunk(`{"tool_calls":[{"id":"a","function":{"name":"Bash","arguments":"{\"command\":"}}]}`, ""),
				chunk(`{"tool_calls":[{"id":"b","function":{"name":"Read","arguments":"{}"}}]}`, ""),
				chunk(`{"tool_calls":[{"id":"a","function":{"arguments":"\"ls\"}"}}]}`, ""),
				chunk(`{}`, "tool_calls"), "[DONE]"},
			want: []llm.Block{llm.ToolUse("a", "Bash", json.RawMessage(`{"command":"ls"}`)), llm.ToolUse("b", "Read", json.RawMessage(`{}`))},
			stop: llm.StopToolUse, tries: 1,
		},
		{
			name: "arguments as an object, no id",
			lines: []string{
				chunk(`{"tool_calls":[{"index":0,"function":{"name":"Bash","arguments":{"command":"ls"}}}]}`, ""),
				chunk(`{}`, "stop"), "[DONE]"},
			want: []llm.Block{{Type: llm.BlockToolUse, Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}},
			stop: llm.StopToolUse, tries: 1,
		},
		{
			name: "DeepSeek's cache counts",
			lines: []string{
				chunk(`{"content":"hi"}`, "stop"),
				`{"id":"c1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}}`, "[DONE]"},
			want: []llm.Block{llm.Text("hi")}, stop: llm.StopEndTurn, usage: llm.Usage{InputTokens: 36, CacheReadInputTokens: 64, OutputTokens: 3}, tries: 1,
		},
		{
			name:  "cut off by length",
			lines: []string{chunk(`{"content":"hi"}`, "length"), "[DONE]"},
			want:  []llm.Block{llm.Text("hi")}, stop: llm.StopMaxTokens, tries: 1,
		},
		{
			name:    "vLLM's error object in the stream",
			lines:   []string{chunk(`{"content":"hi"}`, ""), `{"object":"error","message":"This model's maximum context length is 8192 tokens","type":"BadRequestError","param":null,"code":400}`},
			wantErr: "maximum context length", tries: 1,
		},
		{
			name:    "a chunk that is not JSON",
			lines:   []string{chunk(`{"content":"hi"}`, ""), `{"choices":[{"delta":`},
			wantErr: "malformed response stream: a chunk is not JSON", tries: 1,
		},
		{
			name:    "no end at all",
			lines:   []string{chunk(`{"content":"hi"}`, "")},
			wantErr: "giving up after 2 attempts: openai: the response ended before it was complete", tries: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := rawServer(t, func(w http.ResponseWriter, r *http.Request) { sse(w, tt.lines...) })
			m := model(t, srv.URL, Chat, &waits{}, func(c *Config) { c.MaxAttempts = 2 })
			evs, err := drain(t, m, ask("x"))
			if n.Load() != tt.tries {
				t.Errorf("%d requests, want %d", n.Load(), tt.tries)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			resp := final(t, evs, err)
			for i := range resp.Content {
				if tt.want[i].ID == "" {
					resp.Content[i].ID = ""
				}
			}
			if diff := cmp.Diff(tt.want, resp.Content); diff != "" || resp.StopReason != tt.stop || resp.Usage != tt.usage {
				t.Errorf("stop %q usage %+v; content (-want +got):\n%s", resp.StopReason, resp.Usage, diff)
			}
		})
	}
}

// TestRawHangAfterFinish: a server that sends the finish_reason and then
// holds the connection open has delivered its answer; it costs a short
// wait, not a retry.
func TestRawHangAfterFinish(t *testing.T) {
	srv, n := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, chunk(`{"content":"done"}`, "stop"))
		<-r.Context().Done()
	})
	m := model(t, srv.URL, Chat, &waits{}, func(c *Config) { c.IdleTimeout = 100 * time.Millisecond })
	if resp := respond(t, m, ask("x")); resp.Message().TextContent() != "done" || n.Load() != 1 {
		t.Errorf("answer %q after %d requests", resp.Message().TextContent(), n.Load())
	}
}

// TestRawNotAStream: a 200 answer that is neither a stream nor an error
// (a captive portal's page) is a protocol error, not retried.
func TestRawNotAStream(t *testing.T) {
	srv, n := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/html")
		io.WriteString(w, "<html><body>Please log in to the hotel Wi-Fi</body></html>")
	})
	_, err := drain(t, model(t, srv.URL, Chat, &waits{}, nil), ask("x"))
	if !errors.Is(err, ErrProtocol) || n.Load() != 1 {
		t.Fatalf("error %v after %d requests", err, n.Load())
	}
	contains(t, err.Error(), `HTTP 200 with content-type "text/html" instead of an event stream; body starts: "<html><body>Please log in`)
}

// TestRawResponsesEndOnly: a Responses server that sends the output only in
// response.completed.
func TestRawResponsesEndOnly(t *testing.T) {
	srv, _ := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, `{"type":"response.completed","response":{"id":"r1","model":"m","status":"completed","output":[`+
			`{"type":"message","id":"m1","content":[{"type":"output_text","text":"hi"}]},`+
			`{"type":"function_call","id":"f1","call_id":"c1","name":"Bash","arguments":"{\"command\":\"ls\"}"}],`+
			`"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":20},"output_tokens":5}}}`)
	})
	resp := respond(t, model(t, srv.URL, Responses, &waits{}, nil), ask("x"))
	want := []llm.Block{llm.Text("hi"), llm.ToolUse("c1", "Bash", json.RawMessage(`{"command":"ls"}`))}
	if diff := cmp.Diff(want, resp.Content); diff != "" || resp.StopReason != llm.StopToolUse || resp.Usage != (llm.Usage{InputTokens: 30, CacheReadInputTokens: 20, OutputTokens: 5}) {
		t.Errorf("stop %q usage %+v; (-want +got):\n%s", resp.StopReason, resp.Usage, diff)
	}
}

// TestChatNoEnd: without a finish_reason and without [DONE] a stream cannot
// be told from a truncated one: it is retried, then a clear error.
func TestChatNoEnd(t *testing.T) {
	srv := fake(t, fakeapi.Config{Quirks: []fakeapi.Quirk{fakeapi.NoFinishReason, fakeapi.NoDone}})
	_, err := drain(t, model(t, srv.URL, Chat, &waits{}, func(c *Config) { c.MaxAttempts = 2 }), ask("x"))
	if !errors.Is(err, llm.ErrIncomplete) || len(srv.Requests()) != 2 {
		t.Errorf("error %v after %d requests", err, len(srv.Requests()))
	}
}

// TestRawRunaway: a server sent no bound that never stops generating is
// cut off at twice the request's MaxTokens; the answer so far is the
// response, ending with max_tokens.
func TestRawRunaway(t *testing.T) {
	srv, n := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, chunk(`{"role":"assistant","content":""}`, ""))
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, "data: "+chunk(`{"content":"again and "}`, "")+"\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	m := model(t, srv.URL, Chat, &waits{}, nil)
	req := ask("x")
	req.MaxTokens = 16
	resp := respond(t, m, req)
	text := resp.Message().TextContent()
	if resp.StopReason != llm.StopMaxTokens || len(text) <= 8*16 || len(text) > 8*16+len("again and ") || n.Load() != 1 {
		t.Errorf("stop %q after %d bytes and %d requests", resp.StopReason, len(text), n.Load())
	}
}
