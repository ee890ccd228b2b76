package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestResponsesStream: over many seeds, and with text cut inside
// characters, a Responses stream rebuilds every block.
func TestResponsesStream(t *testing.T) {
	for seed := range int64(8) {
		cfg := fakeapi.Config{Seed: seed, Policy: func(*fakeapi.Request) fakeapi.Reply { return richReply() }}
		if seed%2 == 1 {
			cfg.Quirks = []fakeapi.Quirk{fakeapi.SplitUTF8}
		}
		srv := fake(t, cfg)
		evs, err := drain(t, model(t, srv.URL, Responses, &waits{}, nil), ask("run both"))
		resp := final(t, evs, err)
		th := resp.Content[0]
		if !strings.HasPrefix(th.ID, "rs_") || th.Signature == "" {
			t.Fatalf("seed %d: thinking block %+v lacks the reasoning item's id and encrypted content", seed, th)
		}
		resp.Content[0].ID, resp.Content[0].Signature = "", ""
		checkRich(t, srv, evs, resp, true)
	}
}

// TestResponsesRoundTrip: the reasoning item goes back with its encrypted
// content, the calls and their outputs as function_call and
// function_call_output items.
func TestResponsesRoundTrip(t *testing.T) {
	srv, first, _ := roundTrip(t, Responses, func(r *llm.Request) { r.Effort = "low" })
	msgs := srv.Requests()[1].Request.Messages
	var kinds []string
	for _, b := range msgs[1].Content {
		kinds = append(kinds, b.Type)
	}
	if diff := cmp.Diff([]string{"thinking", "text", "tool_use", "tool_use"}, kinds); diff != "" {
		t.Errorf("assistant turn as the server read it (-want +got):\n%s", diff)
	}
	if sig := msgs[1].Content[0].Signature; sig != first.Content[0].Signature {
		t.Errorf("encrypted content %q went back as %q", first.Content[0].Signature, sig)
	}
	contains(t, string(srv.Requests()[1].Body), `"reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false`)
}

// TestResponsesIncomplete: a response cut at max_output_tokens stops with
// max_tokens.
func TestResponsesIncomplete(t *testing.T) {
	srv := fake(t, fakeapi.Config{Policy: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("partial")}, StopReason: "max_tokens"}
	}})
	resp := respond(t, model(t, srv.URL, Responses, &waits{}, nil), ask("x"))
	if resp.StopReason != llm.StopMaxTokens || resp.Message().TextContent() != "partial" {
		t.Errorf("%+v", resp)
	}
}

// TestResponsesBadArguments: arguments that are not JSON arrive as a JSON
// string input, as in the chat protocol.
func TestResponsesBadArguments(t *testing.T) {
	srv := fake(t, fakeapi.Config{Policy: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.BadArguments("Bash", "ls -la")}}
	}})
	resp := respond(t, model(t, srv.URL, Responses, &waits{}, nil), ask("x"))
	if string(resp.Content[0].Input) != `"ls -la"` {
		t.Errorf("input %s", resp.Content[0].Input)
	}
	var v any
	if json.Unmarshal(resp.Content[0].Input, &v) != nil {
		t.Error("the input is not valid JSON")
	}
}
