package sdkproto_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/sdkproto"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestEveryAgentAsksTheHost: a background agent's and an in-process
// teammate's tool calls reach the host as can_use_tool, each naming the
// asking agent, and the host's answer decides them.
func TestEveryAgentAsksTheHost(t *testing.T) {
	t.Parallel()
	var h *host
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		write := func(name string) fakeapi.Reply {
			return fakeapi.ToolReply("", "Write", map[string]any{"file_path": filepath.Join(h.dir, name), "content": name})
		}
		switch {
		case strings.Contains(first, "bg-task"):
			if turn == 0 {
				return write("bg.txt")
			}
			return fakeapi.TextReply("bg done")
		case strings.Contains(first, "carol-task"):
			if turn == 0 {
				return write("carol.txt")
			}
			return fakeapi.TextReply("carol idle")
		case strings.Contains(first, "start the crew"):
			switch turn {
			case 0:
				return fakeapi.ToolReply("", "TeamCreate", map[string]any{"team_name": "crew", "description": "test"})
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{
					fakeapi.ToolUseBlock("", "Agent", map[string]any{"description": "bg", "prompt": "bg-task: write bg.txt", "run_in_background": true}),
					fakeapi.ToolUseBlock("", "Agent", map[string]any{"description": "carol", "team_name": "crew", "name": "carol", "prompt": "carol-task: write carol.txt"}),
				}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.TextReply("unscripted")
	}
	h = newHost(t, policy, func(o *sdkproto.Options) {
		o.PermissionPrompts = true
		o.Config.TeammateMode = "in-process"
	})
	kinds := map[string]string{} // agent kind → name
	h.user("start the crew")
	for {
		m := h.await("a can_use_tool request or the result", func(m obj) bool {
			return isRequest("can_use_tool")(m) || m["type"] == "result"
		})
		if m["type"] == "result" {
			break
		}
		req := m["request"].(obj)
		kinds[str(req, "agent_kind")] = str(req, "agent_name")
		if str(req, "agent_id") == "" {
			t.Errorf("a %s's request carries no agent_id: %v", str(req, "agent_kind"), req)
		}
		h.send(obj{"type": "control_response", "response": obj{"subtype": "success", "request_id": str(m, "request_id"),
			"response": obj{"behavior": "allow", "updatedInput": req["input"]}}})
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := kinds["background"]; !ok {
		t.Errorf("no request from the background agent: %v", kinds)
	}
	if kinds["teammate"] != "carol" {
		t.Errorf("no request naming teammate carol: %v", kinds)
	}
	for _, f := range []string{"bg.txt", "carol.txt"} {
		if _, err := os.Stat(filepath.Join(h.dir, f)); err != nil {
			t.Errorf("%s was allowed but not written: %v", f, err)
		}
	}
}
