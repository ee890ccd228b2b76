package sdkproto_test

import (
	"strings"
	"testing"
)

// TestHostedRequestsRefuseBadInput: each new control request given what
// it cannot use is answered with an error that says what it needs or
// what there is, and the session goes on.
func TestHostedRequestsRefuseBadInput(t *testing.T) {
	t.Parallel()
	h := newHost(t, echoPolicy, nil)
	h.send(controlRequest("init-1", "initialize", nil))
	h.await("the initialize response", isResponse("init-1"))
	for _, c := range []struct {
		id, subtype string
		body        obj
		want        string
	}{
		{"out-1", "get_task_output", nil, "needs a task_id"},
		{"out-2", "get_task_output", obj{"task_id": "bzzzzzzzz"}, ""}, // shaped like a shell task's: empty
		{"out-3", "get_task_output", obj{"task_id": "../../etc/passwd"}, "no such task"},
		{"tog-1", "mcp_toggle", obj{"serverName": "x"}, `"enabled"`},
		{"tog-2", "mcp_toggle", obj{"serverName": "ghost", "enabled": false}, "the session has none"},
		{"rec-1", "mcp_reconnect", nil, `"serverName"`},
		{"set-1", "mcp_set_servers", obj{"servers": obj{"bad": obj{"type": "stdio"}}}, ""},
	} {
		h.send(controlRequest(c.id, c.subtype, c.body))
		r := h.await("the answer to "+c.id, isResponse(c.id))
		switch {
		case c.want == "" && str(r, "response", "subtype") != "success":
			t.Errorf("%s %v: answered %v, want success", c.subtype, c.body, r)
		case c.want != "" && (str(r, "response", "subtype") != "error" || !strings.Contains(str(r, "response", "error"), c.want)):
			t.Errorf("%s %v: answered %v, want an error saying %s", c.subtype, c.body, r, c.want)
		}
		if c.id == "set-1" && !strings.Contains(str(r, "response", "response", "errors", "bad"), "bad") {
			t.Errorf("a server configuration without a command was not named in errors: %v", r)
		}
	}
	h.user("still there?")
	if res := h.await("the result", isType("result", "")); str(res, "result") != "echo: still there?" {
		t.Errorf("result after the refusals: %v", res)
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}
