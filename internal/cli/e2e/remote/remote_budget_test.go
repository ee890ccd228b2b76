package remote

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRemoteJobStopsAtItsShareOfTheSessionCap: a remote agent whose model
// never stops (a tool call every turn, far under the worker's turn limit)
// runs under the session's --max-budget-usd: the job carries its share of
// what the cap leaves, the worker stops it there, and the lead is told it
// stopped at a budget. The lead's result counts the job's spend, and the
// whole session stays under its cap.
func TestRemoteJobStopsAtItsShareOfTheSessionCap(t *testing.T) {
	t.Parallel()
	var remoteCalls atomic.Int64
	rc := &leadRecorder{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "remote task"):
			remoteCalls.Add(1)
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Glob", map[string]any{"pattern": "*"})}}
		case strings.Contains(first, "send the remote agents") && r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "endless job",
				"prompt": "remote task 0: look around forever", "isolation": "remote"})}}
		}
		return fakeapi.TextReply("noted")
	}
	r := newRemoteRig(t, rc.wrap(policy))
	r.startWorker("w", "--job-max-turns", "200")
	const cap = 0.20
	s, _ := r.lead(leadCtx(t), "--max-budget-usd", "0.20")
	notes := rc.notifications()
	if len(notes) != 1 || !strings.Contains(notes[0], "budget") {
		t.Fatalf("the lead was not told the remote job stopped at a budget: %q", notes)
	}
	calls := remoteCalls.Load()
	if calls < 2 || calls >= 200 {
		t.Errorf("the remote agent made %d model calls; a budget stop comes after a few, well under the 200-turn limit", calls)
	}
	res := s.Result
	t.Logf("remote calls %d, session cost $%.4f (cap $%.2f)", calls, res.TotalCostUSD, cap)
	if res.TotalCostUSD > cap {
		t.Errorf("the session spent $%.4f, over its cap of $%.2f", res.TotalCostUSD, cap)
	}
}
