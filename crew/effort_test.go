package crew_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAgentCallEffortReachesTheChild runs the Agent call's effort field:
// the child's requests carry it as the output effort, a call without it
// sends none (the built-in definitions set none), and a value Claude Code
// does not know is refused before any agent starts, naming the levels.
func TestAgentCallEffortReachesTheChild(t *testing.T) {
	effortOf := func(q *fakeapi.Request) string {
		var body struct {
			OutputConfig struct {
				Effort string `json:"effort"`
			} `json:"output_config"`
		}
		_ = json.Unmarshal(q.Raw, &body)
		return body.OutputConfig.Effort
	}
	for _, tc := range []struct{ effort, want string }{{"low", "low"}, {"max", "max"}, {"", ""}} {
		t.Run("effort="+tc.effort, func(t *testing.T) {
			in := map[string]any{"prompt": "WORK: it"}
			if tc.effort != "" {
				in["effort"] = tc.effort
			}
			r := newRig(t, rigConfig{policy: kindPolicy(agentCall(in), firstUserHas("WORK:"), 0)})
			r.send("LEAD: go")
			r.child()
			var child, lead []string
			for _, rec := range r.srv.Requests() {
				if q := rec.Request; q != nil && strings.Contains(q.FirstUserText(), "WORK:") {
					child = append(child, effortOf(q))
				} else if q != nil {
					lead = append(lead, effortOf(q))
				}
			}
			if len(child) == 0 {
				t.Fatal("the child made no request")
			}
			for _, got := range child {
				if got != tc.want {
					t.Errorf("the child's request has effort %q, want %q", got, tc.want)
				}
			}
			for _, got := range lead {
				if got != "" {
					t.Errorf("the lead's request has effort %q; the call's effort is the child's alone", got)
				}
			}
		})
	}
	t.Run("unknown level", func(t *testing.T) {
		r := newRig(t, rigConfig{policy: kindPolicy(agentCall(map[string]any{"prompt": "WORK: it", "effort": "extreme"}), firstUserHas("WORK:"), 0)})
		r.send("LEAD: go")
		if ids := r.children(); len(ids) != 0 {
			t.Fatalf("an Agent call with effort \"extreme\" started %v", ids)
		}
		res := toolResultText(r.srv)
		for _, want := range []string{"effort", "low", "max"} {
			if !strings.Contains(res, want) {
				t.Errorf("the refusal %q does not mention %q", res, want)
			}
		}
	})
}

// toolResultText is the first tool result the lead sent back.
func toolResultText(srv *fakeapi.Server) string {
	for _, rec := range srv.Requests() {
		if q := rec.Request; q != nil {
			if s := q.LastToolResultText(); s != "" {
				return s
			}
		}
	}
	return ""
}
