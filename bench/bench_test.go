package bench

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func TestHistoryShape(t *testing.T) {
	for _, size := range []int{1_000, 50_000, 200_000} {
		h := History(size)
		if got := Size(h); got < size || got > size+5_000 {
			t.Errorf("History(%d) is %d bytes; want at least the size and at most one round more", size, got)
		}
		if h[0].Role != llm.RoleUser || h[len(h)-1].Role != llm.RoleAssistant {
			t.Errorf("History(%d) runs from %s to %s; want user to assistant", size, h[0].Role, h[len(h)-1].Role)
		}
		pending := map[string]bool{}
		for i, m := range h {
			if i > 0 && m.Role == h[i-1].Role {
				t.Fatalf("History(%d): messages %d and %d are both %s", size, i-1, i, m.Role)
			}
			for _, b := range m.Content {
				switch b.Type {
				case llm.BlockToolUse:
					pending[b.ID] = true
				case llm.BlockToolResult:
					delete(pending, b.ToolUseID)
				}
			}
		}
		if len(pending) > 0 {
			t.Errorf("History(%d) leaves tool calls unanswered: %v", size, pending)
		}
	}
	if d := cmp.Diff(History(10_000), History(10_000)); d != "" {
		t.Errorf("History is not deterministic:\n%s", d)
	}
}

// TestReplayServesTheRecordedResponse records one streamed response from
// the fake and replays it through the real client: same events, same
// message, and the request body is consumed.
func TestReplayServesTheRecordedResponse(t *testing.T) {
	srv := fakeapi.New(fakeapi.Config{Policy: turnReply})
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rec := &Recorder{Next: tr}
	req := &llm.Request{Model: "m", MaxTokens: 100, Messages: History(5_000)}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("Go on.")}})
	first := stream(t, srv.URL, rec, req)
	replay, err := rec.Last()
	if err != nil {
		t.Fatal(err)
	}
	again := stream(t, "http://replay.invalid", replay, req)
	if d := cmp.Diff(first, again); d != "" {
		t.Fatalf("replayed events differ (-recorded +replayed):\n%s", d)
	}
	if replay.Requests() != 1 || replay.LastRequestBytes() < 5_000 {
		t.Fatalf("replay saw %d requests, last %d bytes", replay.Requests(), replay.LastRequestBytes())
	}
	if n := len(first); n < 10 || first[n-1].Type != llm.EventDone || len(first[n-1].Response.Content) != 2 {
		t.Fatalf("stream of %d events does not end in a two-block response", n)
	}
}

func stream(t *testing.T, url string, rt http.RoundTripper, req *llm.Request) []llm.Event {
	t.Helper()
	m, err := claude.New(claude.Config{APIKey: "k", BaseURL: url, HTTPClient: &http.Client{Transport: rt}, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	var evs []llm.Event
	for ev, err := range m.Stream(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestRecorderWithoutResponse(t *testing.T) {
	if _, err := (&Recorder{}).Last(); err == nil {
		t.Fatal("Last on an unused recorder returned no error")
	}
}

// TestWireStructsMatchSDK: BenchmarkRequestJSON compares like with like only
// if both encodings say the same thing.
func TestWireStructsMatchSDK(t *testing.T) {
	req := fixtureRequest(t)
	decode := func(v any) map[string]any {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "stream") // the SDK adds it when it sends
		return m
	}
	if d := cmp.Diff(decode(sdkParams(req)), decode(wireOf(req))); d != "" {
		t.Fatalf("the two encodings differ (-sdk +wire):\n%s", d)
	}
}
