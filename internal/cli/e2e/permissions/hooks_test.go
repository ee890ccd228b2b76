package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestLifecycleHooks configures SubagentStop and TeammateIdle hooks that
// each block once, and a TaskCompleted hook that always blocks: the
// subagent and the teammate are sent back to work once with the hook's
// reason, and completing a shared task is refused with it.
func TestLifecycleHooks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]string{}
	note := func(k, v string) { mu.Lock(); seen[k] += v + "\n"; mu.Unlock() }
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn, last := r.FirstUserText(), r.Turn(), r.LastUserText()
		switch {
		case strings.Contains(first, "sub-job"):
			note("sub", last)
			return fakeapi.TextReply("sub done")
		case strings.Contains(first, "mate-job"):
			note("mate", last)
			if turn == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})}}
			}
			return fakeapi.TextReply("mate done")
		case strings.Contains(first, "lead-start"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "sub", "prompt": "sub-job: quick check"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "hooked"})}}
			case 2:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskCreate", map[string]any{"subject": "ship it", "description": "finish"})}}
			case 3:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "mate",
					"team_name": "hooked", "name": "mate", "prompt": "mate-job: complete task 1"})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	once := func(name, reason string) string {
		marker := filepath.Join(h.Dir, name+".fired")
		return writeScript(t, h.Dir, name+".sh", `cat >/dev/null
if [ -e `+marker+` ]; then exit 0; fi
touch `+marker+`
echo "`+reason+`" >&2
exit 2
`)
	}
	always := writeScript(t, h.Dir, "done.sh", "cat >/dev/null\necho 'tests must pass before this task is done' >&2\nexit 2\n")
	h.Write(".cohort/settings.json", `{"hooks": {
  "SubagentStop": [{"hooks": [{"type": "command", "command": "`+once("substop", "also check the edge case")+`"}]}],
  "TeammateIdle": [{"hooks": [{"type": "command", "command": "`+once("idle", "report to the lead first")+`"}]}],
  "TaskCompleted": [{"hooks": [{"type": "command", "command": "`+always+`"}]}]
}}`)
	out, errOut, code := h.Run("-p", "lead-start: hooks everywhere", "--output-format", "json", "--teammate-mode", "in-process")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(seen["sub"], "also check the edge case") {
		t.Fatalf("the SubagentStop hook's reason never reached the subagent:\n%s", seen["sub"])
	}
	if strings.Count(seen["sub"], "also check the edge case") != 1 {
		t.Fatalf("the subagent was sent back more than once:\n%s", seen["sub"])
	}
	if !strings.Contains(seen["mate"], "tests must pass before this task is done") {
		t.Fatalf("the TaskCompleted hook should have refused the completion:\n%s", seen["mate"])
	}
	if !strings.Contains(seen["mate"], "report to the lead first") {
		t.Fatalf("the TeammateIdle hook's reason never reached the teammate:\n%s", seen["mate"])
	}
	data, err := os.ReadFile(filepath.Join(h.Vars["COHORT_HOME"], "teams", "hooked", "tasks", "1.json"))
	if err != nil || strings.Contains(string(data), `"completed"`) {
		t.Fatalf("task 1 must stay open: %s (%v)", data, err)
	}
}
