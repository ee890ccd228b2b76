package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// tricky is tool input with escapes, characters outside the BMP and HTML.
const tricky = `{"command":"echo \"😀 ünï\" <a> & \\ tab\t","n":[1,2.5,{"deep":null}]}`

// richReply has thinking, text and two parallel tool calls.
func richReply() fakeapi.Reply {
	return fakeapi.Reply{Content: []fakeapi.Block{
		fakeapi.ThinkingBlock("Think é 😀 first.", ""),
		fakeapi.TextBlock("Running both — \"now\" 🙂."),
		fakeapi.ToolUseBlock("", "Bash", json.RawMessage(tricky)),
		fakeapi.ToolUseBlock("", "Bash", map[string]string{"command": "ls -la /tmp/ö"}),
	}}
}

// wantRich is richReply as a response's content, ids aside.
var wantRich = []llm.Block{
	{Type: llm.BlockThinking, Thinking: "Think é 😀 first."},
	llm.Text("Running both — \"now\" 🙂."),
	{Type: llm.BlockToolUse, Name: "Bash", Input: json.RawMessage(tricky)},
	{Type: llm.BlockToolUse, Name: "Bash", Input: json.RawMessage(`{"command":"ls -la /tmp/ö"}`)},
}

// checkRich checks a response to richReply: content, stop reason, that the
// deltas add up to the blocks, and usage against what the fake reported.
func checkRich(t *testing.T, srv *fakeapi.Server, evs []llm.Event, resp *llm.Response, withUsage bool) {
	t.Helper()
	got := make([]llm.Block, len(resp.Content))
	for i, b := range resp.Content {
		if b.Type == llm.BlockToolUse && !strings.HasPrefix(b.ID, "call_") {
			t.Errorf("tool call id %q", b.ID)
		}
		b.ID = ""
		got[i] = b
	}
	if diff := cmp.Diff(wantRich, got); diff != "" {
		t.Fatalf("content (-want +got):\n%s", diff)
	}
	d := streamed(evs)
	for i, b := range resp.Content {
		if want := b.Text + b.Thinking + string(b.Input); d[i] != want {
			t.Errorf("block %d: deltas add up to %q, want %q", i, d[i], want)
		}
	}
	if resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	rec := srv.Requests()[len(srv.Requests())-1]
	want := llm.Usage{InputTokens: int64(rec.Usage.InputTokens), CacheReadInputTokens: int64(rec.Usage.CacheReadInputTokens), OutputTokens: int64(rec.Usage.OutputTokens)}
	if !withUsage {
		want = llm.Usage{}
	}
	if resp.Usage != want || resp.ID != rec.MessageID || resp.RequestID != rec.RequestID || resp.Model != "qwen3-coder" {
		t.Errorf("usage %+v (want %+v), id %q request %q model %q; recorded %+v", resp.Usage, want, resp.ID, resp.RequestID, resp.Model, rec)
	}
}

// TestChatStream: over many seeds the response rebuilds every block, the
// deltas add up to it, and the usage is the fake's.
func TestChatStream(t *testing.T) {
	for seed := range int64(10) {
		srv := fake(t, fakeapi.Config{Seed: seed, Policy: func(*fakeapi.Request) fakeapi.Reply { return richReply() }})
		m := model(t, srv.URL, Chat, &waits{}, nil)
		evs, err := drain(t, m, ask("run both"))
		checkRich(t, srv, evs, final(t, evs, err), true)
		if evs[0].Type != llm.EventStart {
			t.Errorf("first event %v", evs[0].Type)
		}
	}
}

// TestChatQuirks: every quirk a compatible server shows gives the same
// response (a server that reports no usage gives zero usage).
func TestChatQuirks(t *testing.T) {
	for _, q := range fakeapi.Quirks() {
		t.Run(string(q), func(t *testing.T) {
			for seed := range int64(4) {
				srv := fake(t, fakeapi.Config{Seed: seed, Quirks: []fakeapi.Quirk{q}, Policy: func(*fakeapi.Request) fakeapi.Reply { return richReply() }})
				m := model(t, srv.URL, Chat, &waits{}, nil)
				evs, err := drain(t, m, ask("run both"))
				checkRich(t, srv, evs, final(t, evs, err), q != fakeapi.NoUsage)
				if len(srv.Requests()) != 1 {
					t.Fatalf("%d requests: the quirk caused a retry", len(srv.Requests()))
				}
			}
		})
	}
}

// TestChatQuirksTogether: the quirks at once, which no single server shows
// but a client must survive. (Without both a finish_reason and [DONE] a
// stream cannot be told from a truncated one: TestChatNoEnd.)
func TestChatQuirksTogether(t *testing.T) {
	var all []fakeapi.Quirk
	for _, q := range fakeapi.Quirks() {
		if q != fakeapi.SplitSurrogates && q != fakeapi.NoUsage && q != fakeapi.WholeToolCalls && q != fakeapi.NoDone && q != fakeapi.UsageOnFinish {
			all = append(all, q)
		}
	}
	srv := fake(t, fakeapi.Config{Seed: 7, Quirks: all, Policy: func(*fakeapi.Request) fakeapi.Reply { return richReply() }})
	evs, err := drain(t, model(t, srv.URL, Chat, &waits{}, nil), ask("run both"))
	checkRich(t, srv, evs, final(t, evs, err), true)
}

// roundTrip asks for richReply under api, sends its tool calls back with
// their results ("one", and the error "two"), and returns the fake and the
// two responses. edit changes the request first.
func roundTrip(t *testing.T, api API, edit func(*llm.Request)) (*fakeapi.Server, *llm.Response, *llm.Response) {
	t.Helper()
	srv := fake(t, fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return richReply()
		}
		return fakeapi.TextReply("saw " + r.LastToolResultText())
	}})
	m := model(t, srv.URL, api, &waits{}, nil)
	req := ask("run both")
	req.System = []llm.Block{llm.Text(strings.Repeat("A long, stable system prompt. ", 300))}
	if edit != nil {
		edit(req)
	}
	first := respond(t, m, req)
	var results []llm.Block
	for i, u := range first.Message().ToolUses() {
		results = append(results, llm.ToolResult(u.ID, []string{"one", "two"}[i], i == 1))
	}
	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Content: results})
	second := respond(t, m, req)
	if got := second.Message().TextContent(); got != "saw one\ntwo" {
		t.Errorf("second answer %q", got)
	}
	if last := srv.Requests()[1].Request.Messages[2].Content; !last[1].IsError || last[0].IsError {
		t.Errorf("the error result did not arrive as one: %+v", last)
	}
	contains(t, string(srv.Requests()[1].Body), `\u003ctool_use_error\u003etwo\u003c/tool_use_error\u003e"`)
	if second.Usage.CacheReadInputTokens < 1000 || first.Usage.CacheReadInputTokens != 0 {
		t.Errorf("cached tokens %d then %d: the second request should read the first's prefix", first.Usage.CacheReadInputTokens, second.Usage.CacheReadInputTokens)
	}
	return srv, first, second
}

// TestChatRoundTrip: the server receives the tool calls exactly as its
// model wrote them, and the thinking not at all.
func TestChatRoundTrip(t *testing.T) {
	srv, _, _ := roundTrip(t, Chat, nil)
	body := string(srv.Requests()[1].Body)
	contains(t, body, `"arguments":"{\"command\":\"echo \\\"😀 ünï\\\" \u003ca\u003e \u0026 \\\\ tab\\t\",\"n\":[1,2.5,{\"deep\":null}]}"`)
	if strings.Contains(body, "Think é") {
		t.Error("thinking was sent back")
	}
}

// TestChatBadArguments: arguments that are not JSON are the tool_use
// input as a JSON string, not an error; they go back as the same text.
func TestChatBadArguments(t *testing.T) {
	const bad = `{"command": "ls", oops`
	srv := fake(t, fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.BadArguments("Bash", bad)}}
		}
		return fakeapi.TextReply("fixed")
	}})
	m := model(t, srv.URL, Chat, &waits{}, nil)
	req := ask("run")
	first := respond(t, m, req)
	use := first.Content[0]
	var text string
	if err := json.Unmarshal(use.Input, &text); err != nil || text != bad || first.StopReason != llm.StopToolUse {
		t.Fatalf("input %s (%v), stop %q", use.Input, err, first.StopReason)
	}
	req.Messages = append(req.Messages, first.Message(), llm.Message{Role: llm.RoleUser, Content: []llm.Block{
		llm.ToolResult(use.ID, "InputValidationError: the arguments are not JSON", true)}})
	respond(t, m, req)
	contains(t, string(srv.Requests()[1].Body), `"arguments":"{\"command\": \"ls\", oops"`)
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests: bad arguments must not cause a retry", n)
	}
}
