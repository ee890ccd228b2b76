package roles

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// TestEveryAgentKindReportsItsUsage: the task_notification event of every
// agent — subagent, background agent, fork, teammate — carries the tokens
// it used, its tool calls and its time (teammates reported 0).
func TestEveryAgentKindReportsItsUsage(t *testing.T) {
	t.Parallel()
	echo := func(s string) []fakeapi.Block {
		return []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "echo " + s, "description": "say " + s})}
	}
	calls := map[string][]fakeapi.Block{roleSubagent: echo("sub"), roleBackground: echo("bg"), roleFork: echo("fork"), roleTeammate: echo("mate")}
	f := runRoles(t, seedModel, calls, "stream-json", "--allowedTools", "Bash(echo:*)")
	s := clitest.ParseStream(t, f.out)
	kinds := map[string]bool{}
	started := map[string]string{}
	for _, ev := range s.Events(task.SubtypeTaskStarted) {
		started[ev.TaskID] = ev.TaskType
	}
	for _, ev := range s.Events(task.SubtypeTaskNotification) {
		kind := started[ev.TaskID]
		if kind == "local_bash" || kind == "" {
			continue
		}
		kinds[kind] = true
		if ev.Usage == nil || ev.Usage.TotalTokens <= 0 || ev.Usage.ToolUses < 1 || ev.Usage.DurationMs <= 0 {
			t.Errorf("task %s (%s, %s) reported usage %+v, want its tokens, at least one tool use and its time", ev.TaskID, kind, ev.Status, ev.Usage)
		}
	}
	for _, want := range []string{"local_agent", "in_process_teammate"} {
		if !kinds[want] {
			t.Errorf("no task_notification from a %s; kinds seen: %v", want, kinds)
		}
	}
}
