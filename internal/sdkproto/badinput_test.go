package sdkproto_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/sdkproto"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// echoPolicy answers with the last line of the last user message (the
// prompt; the session's reminders come before it).
func echoPolicy(r *fakeapi.Request) fakeapi.Reply {
	lines := strings.Split(strings.TrimSpace(r.LastUserText()), "\n")
	return fakeapi.TextReply("echo: " + lines[len(lines)-1])
}

// writePolicy makes the lead call Write once, then report what the tool
// said.
func writePolicy(dir string) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.ToolReply("", "Write", map[string]any{"file_path": filepath.Join(dir, "w.txt"), "content": "x"})
		}
		return fakeapi.TextReply("tool said: " + r.LastToolResultText())
	}
}

// TestBadLinesAreReportedAndTheSessionGoesOn: a line that is not JSON, one
// of an unknown type, a user line without text, an unknown control
// subtype and a control_response nobody waits for each produce a
// protocol_error naming the line; the unknown request is answered with an
// error; and the next prompt still runs.
func TestBadLinesAreReportedAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	h := newHost(t, echoPolicy, nil)
	h.send(controlRequest("init-1", "initialize", nil))
	h.await("the initialize response", isResponse("init-1"))
	h.send(`{"type": "user", "message": {`)
	e := h.await("a protocol error for the broken line", isType("system", "protocol_error"))
	if !strings.Contains(str(e, "error"), "stdin line 2") || !strings.Contains(str(e, "error"), "JSON") {
		t.Errorf("broken line: %q", str(e, "error"))
	}
	h.send(`{"type": "telepathy"}`)
	e = h.await("a protocol error for the unknown type", isType("system", "protocol_error"))
	if !strings.Contains(str(e, "error"), `"telepathy"`) || !strings.Contains(str(e, "error"), "line 3") {
		t.Errorf("unknown type: %q", str(e, "error"))
	}
	h.send(obj{"type": "user", "message": obj{"role": "user", "content": "   "}})
	e = h.await("a protocol error for the empty prompt", isType("system", "protocol_error"))
	if !strings.Contains(str(e, "error"), "empty") {
		t.Errorf("empty prompt: %q", str(e, "error"))
	}
	h.send(controlRequest("odd-1", "summon_dragon", nil))
	r := h.await("the error response to the unknown subtype", isResponse("odd-1"))
	if str(r, "response", "subtype") != "error" || !strings.Contains(str(r, "response", "error"), "summon_dragon") {
		t.Errorf("unknown subtype answered %v", r)
	}
	e = h.await("the protocol error for the unknown subtype", isType("system", "protocol_error"))
	if !strings.Contains(str(e, "error"), "stdin line 5") {
		t.Errorf("unknown subtype: %q", str(e, "error"))
	}
	h.send(obj{"type": "control_response", "response": obj{"subtype": "success", "request_id": "nobody-asked", "response": obj{}}})
	e = h.await("a protocol error for the stray response", isType("system", "protocol_error"))
	if !strings.Contains(str(e, "error"), "nobody-asked") {
		t.Errorf("stray response: %q", str(e, "error"))
	}
	h.send(controlRequest("init-2", "initialize", nil))
	r = h.await("the answer to a second initialize", isResponse("init-2"))
	if str(r, "response", "subtype") != "error" {
		t.Errorf("a second initialize was accepted: %v", r)
	}
	h.user("still there?")
	res := h.await("the result", isType("result", ""))
	if res["is_error"] != false || str(res, "result") != "echo: still there?" {
		t.Errorf("result after bad input: %v", res)
	}
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestAHostThatNeverAnswersIsDeniedAtTheDeadline: can_use_tool without an
// answer is withdrawn at the prompt timeout (control_cancel_request) and
// the call is denied with a reason the model sees.
func TestAHostThatNeverAnswersIsDeniedAtTheDeadline(t *testing.T) {
	t.Parallel()
	var h *host
	h = newHost(t, func(r *fakeapi.Request) fakeapi.Reply { return writePolicy(h.dir)(r) }, func(o *sdkproto.Options) {
		o.PermissionPrompts, o.PromptTimeout = true, 300*time.Millisecond
	})
	h.user("write something")
	req := h.await("the can_use_tool request", isRequest("can_use_tool"))
	id := str(req, "request_id")
	cancel := h.await("the withdrawal", func(m obj) bool { return m["type"] == "control_cancel_request" })
	if str(cancel, "request_id") != id {
		t.Errorf("cancelled %q, asked %q", str(cancel, "request_id"), id)
	}
	res := h.await("the result", isType("result", ""))
	if !strings.Contains(str(res, "result"), "did not answer within") {
		t.Errorf("the model was not told why: %q", str(res, "result"))
	}
	// The answer that comes too late is no answer to anything.
	h.send(obj{"type": "control_response", "response": obj{"subtype": "success", "request_id": id, "response": obj{"behavior": "allow"}}})
	h.await("a protocol error for the late answer", isType("system", "protocol_error"))
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := filepathStat(h.dir, "w.txt"); err == nil {
		t.Error("the write happened without an answer")
	}
}

// TestStdinClosedMidTurn: with a permission prompt pending, stdin ends;
// the call is denied with a reason, the turn still ends with its result,
// and Serve returns.
func TestStdinClosedMidTurn(t *testing.T) {
	t.Parallel()
	var h *host
	h = newHost(t, func(r *fakeapi.Request) fakeapi.Reply { return writePolicy(h.dir)(r) }, func(o *sdkproto.Options) {
		o.PermissionPrompts = true
	})
	h.user("write something")
	h.await("the can_use_tool request", isRequest("can_use_tool"))
	if err := h.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var res obj
	for _, m := range h.seen {
		if m["type"] == "result" {
			res = m
		}
	}
	if res == nil || !strings.Contains(str(res, "result"), "closed its input") {
		t.Fatalf("want a result that says the host closed its input; got:\n%s", dump(h.seen))
	}
	if _, err := filepathStat(h.dir, "w.txt"); err == nil {
		t.Error("the write happened without an answer")
	}
}
