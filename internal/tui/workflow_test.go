package tui

import (
	"math"
	"strings"
	"testing"
	"time"

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

// The tree shows spend against cap: an agent's cost cell against its own
// cap, and the header the session's total against the session's cap (the
// lead's CapUSD).
func TestTreeShowsSpendAgainstCap(t *testing.T) {
	var tr tree
	tr.set([]cohort.AgentInfo{
		{ID: "lead", Kind: "lead", State: cohort.AgentIdle, CostUSD: 0.01, CapUSD: 0.05},
		{ID: "a1", Kind: "background", Description: "capped", ParentID: "lead", State: cohort.AgentCompleted, CostUSD: 0.031, CapUSD: 0.05},
		{ID: "a2", Kind: "background", Description: "free", ParentID: "lead", State: cohort.AgentCompleted, CostUSD: 0.002},
	})
	st := newStyles()
	lines := tr.view(120, 10, time.Now(), st)
	all := strings.Join(lines, "\n")
	for _, want := range []string{"$0.0430 of $0.0500 cap", "$.031/.05", "$0.0020"} {
		if !strings.Contains(all, want) {
			t.Errorf("the tree does not show %q:\n%s", want, all)
		}
	}
	if strings.Count(all, "/.05") != 1 {
		t.Errorf("only the capped agent's cell shows a cap:\n%s", all)
	}
}
