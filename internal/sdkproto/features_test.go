package sdkproto_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/sdkproto"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestReplayEchoesEachPromptBeforeItsTurn: with Replay the user message
// comes back as received (isReplay, its uuid); without it no user event
// carries the prompt.
func TestReplayEchoesEachPromptBeforeItsTurn(t *testing.T) {
	t.Parallel()
	for _, replay := range []bool{true, false} {
		h := newHost(t, echoPolicy, func(o *sdkproto.Options) { o.Replay = replay })
		h.send(obj{"type": "user", "uuid": "0b6f6c2e-3b1a-4c8e-9d2f-5a7e1c4b9d10", "message": obj{"role": "user", "content": "ping"}, "parent_tool_use_id": nil})
		h.await("the result", isType("result", ""))
		if err := h.close(); err != nil {
			t.Fatal(err)
		}
		var echoes []obj
		for _, m := range h.seen {
			if m["type"] == "user" {
				echoes = append(echoes, m)
			}
		}
		switch {
		case replay && (len(echoes) != 1 || echoes[0]["isReplay"] != true || str(echoes[0], "uuid") != "0b6f6c2e-3b1a-4c8e-9d2f-5a7e1c4b9d10" ||
			str(echoes[0], "message", "content") != "ping"):
			t.Errorf("replay: want the prompt echoed once as sent, got %v", echoes)
		case !replay && len(echoes) != 0:
			t.Errorf("without replay the prompt was echoed: %v", echoes)
		}
	}
}

// TestSetModelAndInitFields: system/init names the agent types, MCP
// servers, slash commands and versions; set_model changes the next
// request's model and null sets it back.
func TestSetModelAndInitFields(t *testing.T) {
	t.Parallel()
	h := newHost(t, echoPolicy, nil)
	h.send(controlRequest("i", "initialize", obj{"agents": obj{"reviewer": obj{"description": "reviews code", "prompt": "You review."}},
		"appendSystemPrompt": "HOST-ADDITION: answer briefly."}))
	resp := h.await("the initialize response", isResponse("i"))
	if !strings.Contains(enc(resp), `"name":"reviewer"`) {
		t.Errorf("initialize's agents are not in its response: %v", resp)
	}
	h.send(controlRequest("m1", "set_model", obj{"model": "claude-opus-4-1"}))
	if r := h.await("the set_model answer", isResponse("m1")); str(r, "response", "subtype") != "success" {
		t.Fatalf("set_model: %v", r)
	}
	h.user("one")
	h.await("the first result", isType("result", ""))
	h.send(controlRequest("m2", "set_model", obj{"model": nil}))
	h.await("the second set_model answer", isResponse("m2"))
	h.user("two")
	h.await("the second result", isType("result", ""))
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	var init obj
	for _, m := range h.seen {
		if m["type"] == "system" && m["subtype"] == "init" {
			init = m
		}
	}
	for _, k := range []string{"agents", "mcp_servers", "slash_commands", "claude_code_version", "cohort_version", "tools"} {
		if _, ok := init[k]; !ok {
			t.Errorf("system/init has no %s: %v", k, init)
		}
	}
	if !strings.Contains(enc(init["agents"]), `"reviewer"`) {
		t.Errorf("system/init does not list the host's agent: %v", init)
	}
	var models []string
	for _, r := range h.srv.Requests() {
		if r.Request != nil {
			models = append(models, r.Request.Model)
			if !strings.Contains(r.Request.SystemText(), "HOST-ADDITION: answer briefly.") {
				t.Errorf("initialize's appendSystemPrompt is not in the system prompt")
			}
		}
	}
	if len(models) != 2 || models[0] != "claude-opus-4-1" || models[1] == "claude-opus-4-1" {
		t.Errorf("models of the two turns: %v, want claude-opus-4-1 then the default", models)
	}
}

// TestPartialMessagesStream: with PartialMessages the deltas come as
// stream_event lines.
func TestPartialMessagesStream(t *testing.T) {
	t.Parallel()
	h := newHost(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("a streamed answer") }, func(o *sdkproto.Options) {
		o.Config.PartialMessages = true
	})
	h.user("stream it")
	h.await("a text delta", func(m obj) bool {
		return m["type"] == "stream_event" && str(m, "event", "type") == "content_block_delta"
	})
	h.await("the result", isType("result", ""))
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}

func enc(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
