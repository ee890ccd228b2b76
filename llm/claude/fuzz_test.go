package claude

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
	})
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
