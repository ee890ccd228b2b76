package crew_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// TestSpawnedAgentIsListedWithItsTask: from the moment a spawned agent's
// task exists (its task_started event) the runtime lists the agent with
// that task, and not before — a snapshot never shows a running agent
// without its description and start time (the terminal UI's tree showed
// bare ids for a moment in a fan-out).
func TestSpawnedAgentIsListedWithItsTask(t *testing.T) {
	var mu sync.Mutex
	var problems []string
	seen := 0
	r := newRig(t, rigConfig{
		policy: func(q *fakeapi.Request) fakeapi.Reply {
			switch {
			case strings.Contains(q.FirstUserText(), "CHILD"):
				return fakeapi.TextReply("counted")
			case q.Turn() == 0:
				var blocks []fakeapi.Block
				for _, typ := range []string{"general-purpose", "Explore", "Plan"} {
					blocks = append(blocks, call("Agent", map[string]any{"description": "count " + typ,
						"prompt": "CHILD count", "subagent_type": typ}))
				}
				return reply(blocks...)
			}
			return fakeapi.TextReply("lead done")
		},
		onTask: func(r *rig, ev task.Event) {
			if ev.Subtype != task.SubtypeTaskStarted {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			seen++
			a, ok := r.rt.Lookup(ev.TaskID)
			switch {
			case !ok:
				problems = append(problems, ev.TaskID+" not listed at task_started")
			case a.Task() == nil || a.Task().ID() != ev.TaskID:
				problems = append(problems, ev.TaskID+" listed without its task at task_started")
			}
		},
	})
	r.send("LEAD count")
	for _, a := range r.rt.Agents() {
		if a != r.lead && a.Task() == nil {
			problems = append(problems, a.ID()+" listed without a task")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen != 3 || len(problems) > 0 {
		t.Fatalf("%d task_started events; %v", seen, problems)
	}
}
