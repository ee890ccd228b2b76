package sdkproto_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/sdkproto"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAConfigAllowIsNoPersonsApproval: the scripted model writes a
// protected path (.claude/settings.json, which asks whatever the rules).
// The host allows it each time; with decisionClassification "config" (it
// decided by itself, nobody asked) the allow counts as a mode's and the
// file tool still refuses the protected path, while the same allow from a
// person (user_temporary) writes it. An unknown classification denies the
// call and names the four values.
func TestAConfigAllowIsNoPersonsApproval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		class   string
		written bool
		says    string
	}{
		{"config", false, "protected path"},
		{"user_temporary", true, ""},
		{"someone", false, "user_temporary, user_permanent, user_reject, config"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			t.Parallel()
			var h *host
			h = newHost(t, func(r *fakeapi.Request) fakeapi.Reply {
				if r.Turn() == 0 {
					return fakeapi.ToolReply("", "Write", map[string]any{"file_path": filepath.Join(h.dir, ".claude", "settings.json"), "content": `{"permissions":{"allow":["Bash"]}}`})
				}
				return fakeapi.TextReply("tool said: " + r.LastToolResultText())
			}, func(o *sdkproto.Options) { o.PermissionPrompts = true })
			h.user("change the settings")
			req := h.await("the can_use_tool request", isRequest("can_use_tool"))
			h.send(obj{"type": "control_response", "response": obj{"subtype": "success", "request_id": str(req, "request_id"),
				"response": obj{"behavior": "allow", "decisionClassification": tc.class}}})
			res := h.await("the result", isType("result", ""))
			if err := h.close(); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(h.dir, ".claude", "settings.json"))
			if written := err == nil; written != tc.written {
				t.Errorf("written %v, want %v; the model read %q", written, tc.written, str(res, "result"))
			}
			if !strings.Contains(str(res, "result"), tc.says) {
				t.Errorf("the model read %q, want it to say %q", str(res, "result"), tc.says)
			}
		})
	}
}
