package workflowrun

import (
	"encoding/json"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/workflow/host"
	"github.com/google/go-cmp/cmp"
)

func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		model string
		calls int
		want  float64
		ok    bool
	}{
		{"claude-sonnet-4-5", 2, 2 * PrefixTokens * 3 / 1e6, true},
		{"claude-opus-4-1", 10, 10 * PrefixTokens * 5 / 1e6, true},
		{"unpriced-model", 3, 0, false},
	} {
		got, ok := Estimate(llm.DefaultPrices, tc.model, host.Checked{AgentCalls: tc.calls})
		if ok != tc.ok || got != tc.want {
			t.Errorf("Estimate(%s, %d) = %v, %v; want %v, %v", tc.model, tc.calls, got, ok, tc.want, tc.ok)
		}
	}
}

func TestResultText(t *testing.T) {
	res := host.Result{Value: json.RawMessage(`{"ok":true}`), Agents: 5, Live: 3, Replayed: 2, Cost: 0.5,
		Phases: []host.PhaseCost{{Title: "review", Agents: 3, Cost: 0.3}, {Title: "", Agents: 2, Cost: 0.2}}}
	want := `{"ok":true}

Agents: 5 (3 run, 2 replayed from the journal). Cost: $0.5000 — review $0.3000 (3 agents), (no phase) $0.2000 (2 agents).`
	if d := cmp.Diff(want, ResultText(res)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
