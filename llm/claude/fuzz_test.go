package claude

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cohort-dev/cohort/llm"
)

// FuzzStream feeds arbitrary bytes as an event stream through the real SDK
// decoder and our translation. Whatever arrives, the stream ends with either
// an error or one EventDone whose content matches what was streamed; it never
// panics or hangs.
func FuzzStream(f *testing.F) {
	for _, name := range []string{"mixed.sse", "truncated_json.sse", "broken_tool_input.sse"} {
		b, err := readFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(textStream("hello"))
	f.Add(strings.ReplaceAll(textStream("crlf"), "\n", "\r\n"))
	f.Add("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}\n\n")
	f.Add("data: {}\n\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		tr := &scriptTransport{scripts: []script{{body: body}}}
		m, err := New(Config{APIKey: "k", BaseURL: "http://fuzz.invalid", MaxAttempts: 1, HTTPClient: &http.Client{Transport: tr}})
		if err != nil {
			t.Fatal(err)
		}
		var evs []llm.Event
		var streamErr error
		for ev, err := range m.Stream(t.Context(), simpleRequest("x")) {
			if err != nil {
				streamErr = err
				break
			}
			evs = append(evs, ev)
		}
		dones := 0
		for _, e := range evs {
			if e.Type == llm.EventDone {
				dones++
			}
		}
		if streamErr != nil {
			if dones != 0 {
				t.Fatalf("error %v after EventDone", streamErr)
			}
			return
		}
		if dones != 1 || evs[len(evs)-1].Type != llm.EventDone {
			t.Fatalf("no error and no final EventDone: %v", eventTypes(evs))
		}
		checkStreamedContent(t, evs)
		checkAgainstSDK(t, body, evs[len(evs)-1].Response)
	})
}

// checkAgainstSDK decodes body with the SDK's own event union and
// Message.Accumulate, which this package used before it decoded events
// itself. Where the SDK reads a complete message too, both must say the
// same. (Tool input is compared only when the SDK's is valid JSON: it
// appends deltas to the input of content_block_start, where this package
// keeps the deltas alone.) encoding/json matches member names without
// regard to case and the SDK's decoder does not, so bodies that spell a
// member name in another case are left out.
func checkAgainstSDK(t *testing.T, body string, got *llm.Response) {
	t.Helper()
	if !canonicalNames(body) {
		return
	}
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(body))}
	stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
	defer stream.Close()
	var msg anthropic.Message
	stopped := false
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return
		}
		if ev.Type == "message_stop" {
			stopped = true
			break
		}
	}
	if !stopped {
		return
	}
	want := &llm.Response{ID: msg.ID, Model: string(msg.Model), StopReason: llm.StopReason(msg.StopReason),
		Usage: llm.Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens,
			CacheCreationInputTokens: msg.Usage.CacheCreationInputTokens, CacheReadInputTokens: msg.Usage.CacheReadInputTokens},
		RequestID: got.RequestID}
	for i, cb := range msg.Content {
		b := llm.Block{Type: llm.BlockType(cb.Type), Text: cb.Text, ID: cb.ID, Name: cb.Name, Thinking: cb.Thinking,
			Signature: cb.Signature, Data: cb.Data}
		if i < len(got.Content) && b.Type == llm.BlockToolUse {
			b.Input = got.Content[i].Input
			if json.Valid(cb.Input) && !bytes.Equal(cb.Input, got.Content[i].Input) {
				var x, y any
				if json.Unmarshal(cb.Input, &x) != nil || json.Unmarshal(got.Content[i].Input, &y) != nil || !cmp.Equal(x, y) {
					t.Errorf("block %d: tool input %s, the SDK's %s", i, got.Content[i].Input, cb.Input)
				}
			}
		}
		want.Content = append(want.Content, b)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("response differs from the SDK's accumulation (-sdk +ours):\n%s", diff)
	}
}

// checkStreamedContent checks that the final response holds exactly what
// the block starts and deltas announced.
func checkStreamedContent(t *testing.T, evs []llm.Event) {
	t.Helper()
	resp := evs[len(evs)-1].Response
	streamed := map[int]*strings.Builder{}
	for _, e := range evs {
		switch e.Type {
		case llm.EventBlockStart:
			streamed[e.Index] = &strings.Builder{}
			streamed[e.Index].WriteString(e.Block.Text + e.Block.Thinking)
		case llm.EventDelta:
			if e.DeltaKind != llm.DeltaSignature {
				streamed[e.Index].WriteString(e.Delta)
			}
		}
	}
	if len(streamed) != len(resp.Content) {
		t.Fatalf("%d blocks streamed, %d in the response", len(streamed), len(resp.Content))
	}
	for _, e := range evs {
		if e.Type != llm.EventBlockStop {
			continue
		}
		if e.Block == nil {
			t.Fatalf("block %d: content_block_stop without the complete block", e.Index)
		}
		if d := cmp.Diff(resp.Content[e.Index], *e.Block); d != "" {
			t.Fatalf("block %d: the block handed over at its stop differs from the response's (-response +stop):\n%s", e.Index, d)
		}
	}
	for i, b := range resp.Content {
		got := b.Text + b.Thinking
		if b.Type == llm.BlockToolUse {
			if !json.Valid(b.Input) {
				t.Fatalf("block %d: tool input %q is not JSON", i, b.Input)
			}
			if streamed[i].Len() == 0 {
				continue // input given whole in content_block_start
			}
			got = string(b.Input)
		}
		if got != streamed[i].String() {
			t.Fatalf("block %d: response %q, streamed %q", i, got, streamed[i].String())
		}
	}
}

// wireNames are the member names wireEvent reads.
var wireNames = []string{"type", "index", "message", "content_block", "delta", "usage", "id", "model", "text", "name",
	"input", "thinking", "signature", "data", "partial_json", "stop_reason", "input_tokens", "output_tokens",
	"cache_creation_input_tokens", "cache_read_input_tokens"}

// canonicalNames reports whether the JSON of body's data lines names
// members the way both decoders read alike: no member named twice in one
// object (encoding/json keeps the last, the SDK the first) and no case
// variant of a name wireEvent reads.
func canonicalNames(body string) bool {
	for _, line := range strings.Split(body, "\n") {
		if _, data, ok := strings.Cut(line, ":"); ok && !canonicalJSON(data) {
			return false
		}
	}
	return true
}

func canonicalJSON(data string) bool {
	type frame struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	dec := json.NewDecoder(strings.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return true // the end, or not JSON: both decoders refuse that alike
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].keys != nil && stack[n-1].expectKey {
				f := stack[n-1]
				if f.keys[tok] {
					return false
				}
				for _, name := range wireNames {
					if tok != name && strings.EqualFold(tok, name) {
						return false
					}
				}
				f.keys[tok], f.expectKey = true, false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}
