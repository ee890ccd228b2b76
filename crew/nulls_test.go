package crew_test

import (
	"strings"
	"testing"
)

// TestAgentCallNullFields: as in Claude Code 2.1.332, an Agent call's null
// timeout or cwd reads as absent and the agent starts; a null in any other
// optional field (model, run_in_background, …) is refused, naming it, and
// nothing starts.
func TestAgentCallNullFields(t *testing.T) {
	t.Run("timeout and cwd", func(t *testing.T) {
		r := newRig(t, rigConfig{policy: kindPolicy(agentCall(map[string]any{"prompt": "WORK: it", "timeout": nil, "cwd": nil}), firstUserHas("WORK:"), 0)})
		r.send("LEAD: go")
		if ids := r.children(); len(ids) != 1 {
			t.Fatalf("an Agent call with a null timeout and cwd started %v; want one agent (refusal: %s)", ids, toolResultText(r.srv))
		}
	})
	t.Run("model and run_in_background", func(t *testing.T) {
		r := newRig(t, rigConfig{policy: kindPolicy(agentCall(map[string]any{"prompt": "WORK: it", "model": nil, "run_in_background": nil}), firstUserHas("WORK:"), 0)})
		r.send("LEAD: go")
		if ids := r.children(); len(ids) != 0 {
			t.Fatalf("an Agent call with a null model started %v", ids)
		}
		res := toolResultText(r.srv)
		for _, want := range []string{`"model"`, `"run_in_background"`, "null"} {
			if !strings.Contains(res, want) {
				t.Errorf("the refusal %q does not mention %s", res, want)
			}
		}
	})
}
