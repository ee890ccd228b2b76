package team

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestLeadUsesTeamTaskList: after TeamCreate the lead plans the work in the
// team's shared task list (TaskCreate, TaskList), as Claude Code's lead does.
// The lead is not a member spawned into a team, so its tool env carries no
// team name; the task tools must still find the team it leads.
func TestLeadUsesTeamTaskList(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		results []string
	)
	c := clitest.NewConv().On("plan the work",
		clitest.Calls(clitest.Use("TeamCreate", map[string]any{"team_name": "planners", "description": "plan"})),
		clitest.Calls(clitest.Use("TaskCreate", map[string]any{"subject": "Write the parser", "description": "parse it"})),
		clitest.Calls(clitest.Use("TaskList", map[string]any{})),
		clitest.Text("planned"),
	)
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() >= 2 {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
		}
		return c.Policy(r)
	})
	out, errOut, code := h.Run("-p", "plan the work", "--output-format", "json", "--teammate-mode", "in-process")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	got := strings.Join(results, "\n")
	mu.Unlock()
	for _, want := range []string{"Created task #1: Write the parser", "#1 pending: Write the parser"} {
		if !strings.Contains(got, want) {
			t.Errorf("the lead's task tools said:\n%s\nwant %q in it", got, want)
		}
	}
}
