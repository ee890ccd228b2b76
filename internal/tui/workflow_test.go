package tui

import (
	"math"
	"testing"

	"github.com/cohort-dev/cohort"
	"github.com/google/go-cmp/cmp"
)

// A workflow run is one node with its agents below it; its cost is not
// counted twice (the node's is its agents').
func TestTreeShowsAWorkflowRun(t *testing.T) {
	var tr tree
	tr.set([]cohort.AgentInfo{
		{ID: "lead", Kind: "lead", State: cohort.AgentIdle},
		{ID: "wabc", Name: "wf0123456789abcdef", Kind: "workflow", Type: "review", ParentID: "lead", State: cohort.AgentRunning, CostUSD: 0.3,
			Workflow: &cohort.WorkflowInfo{RunID: "wf0123456789abcdef", Phase: "verify", Started: 2, Finished: 1}},
		{ID: "a1", Kind: "background", Description: "review a.go", ParentID: "wabc", State: cohort.AgentCompleted, CostUSD: 0.1},
		{ID: "a2", Kind: "background", Description: "verify a.go", ParentID: "wabc", State: cohort.AgentRunning, CostUSD: 0.2},
	})
	var got []string
	for i, a := range tr.rows {
		got = append(got, agentLabel(a)+"@"+string(rune('0'+tr.depth[i])))
	}
	want := []string{"lead@0", "workflow review · verify · 1/2 agents@1", "review a.go@2", "verify a.go@2"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if math.Abs(tr.total.cost-0.3) > 1e-9 || tr.total.agents != 2 || tr.total.running != 1 {
		t.Errorf("totals %+v; want the agents' cost once and 2 agents", tr.total)
	}
}
