package fakeapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start starts a server that the test closes.
func start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := New(cfg)
	t.Cleanup(s.Close)
	return s
}

// httpClient returns a client with its own transport, closed with the test,
// so no keep-alive goroutine outlives it.
func httpClient(t testing.TB) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// sseEvent is one decoded server-sent event.
type sseEvent struct {
	Name string
	Data string
}

// readSSE parses an event stream with the rules of the SSE spec that the API
// uses. It returns the events read and the reader's error (nil at a clean
// EOF).
func readSSE(r io.Reader) ([]sseEvent, error) {
	var evs []sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	var cur sseEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if cur.Name != "" || len(data) > 0 {
				cur.Data = strings.Join(data, "\n")
				evs = append(evs, cur)
			}
			cur, data = sseEvent{}, nil
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "event":
			cur.Name = value
		case "data":
			data = append(data, value)
		}
	}
	return evs, sc.Err()
}

// call sends body to path and returns the response with its body read.
// readErr is the error that ended reading the body.
type result struct {
	Status  int
	Header  http.Header
	Body    []byte
	ReadErr error
}

func call(t testing.TB, c *http.Client, url, path string, body any) result {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := newRequest(t, url+path, raw)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(resp.Body)
	return result{resp.StatusCode, resp.Header, data, rerr}
}

// newRequest returns a POST with the headers the SDK sends.
func newRequest(t testing.TB, url string, raw []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "test")
	return req, nil
}

// body builds a minimal valid streaming request around messages.
func body(msgs ...map[string]any) map[string]any {
	return map[string]any{"model": "claude-test", "max_tokens": 4096, "stream": true, "messages": msgs}
}

func user(content any) map[string]any { return map[string]any{"role": "user", "content": content} }
func assistant(content any) map[string]any {
	return map[string]any{"role": "assistant", "content": content}
}

// decoded reassembles a stream the way a client does.
type decoded struct {
	Names      []string // event names without pings
	Pings      int
	Blocks     []map[string]any
	Text       map[int]string
	StopReason string
	Start      map[string]any // message_start's message
	EndUsage   map[string]any
	ErrorEvent map[string]any
	Stopped    bool // message_stop arrived
}

func decode(t testing.TB, evs []sseEvent) decoded {
	t.Helper()
	d := decoded{Text: map[int]string{}}
	for _, ev := range evs {
		var m map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			t.Fatalf("event %s: data is not JSON: %v: %s", ev.Name, err, ev.Data)
		}
		if m["type"] != ev.Name {
			t.Fatalf("event %s carries type %v", ev.Name, m["type"])
		}
		if ev.Name == "ping" {
			d.Pings++
			continue
		}
		d.Names = append(d.Names, ev.Name)
		switch ev.Name {
		case "message_start":
			d.Start = m["message"].(map[string]any)
		case "content_block_start":
			d.Blocks = append(d.Blocks, m["content_block"].(map[string]any))
		case "content_block_delta":
			i := int(m["index"].(float64))
			delta := m["delta"].(map[string]any)
			for _, k := range []string{"text", "partial_json", "thinking"} {
				if s, ok := delta[k].(string); ok {
					d.Text[i] += s
				}
			}
			if s, ok := delta["signature"].(string); ok {
				d.Blocks[i]["signature"] = d.Blocks[i]["signature"].(string) + s
			}
		case "message_delta":
			d.StopReason = m["delta"].(map[string]any)["stop_reason"].(string)
			d.EndUsage = m["usage"].(map[string]any)
		case "message_stop":
			d.Stopped = true
		case "error":
			d.ErrorEvent = m["error"].(map[string]any)
		}
	}
	return d
}
