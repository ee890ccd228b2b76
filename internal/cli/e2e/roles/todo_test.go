package roles

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestTodoWriteDoesNotNagAParallelLead: a lead that asked three agents to
// work at once marks their three items in_progress; TodoWrite's result
// and description do not tell it to keep only one in progress.
func TestTodoWriteDoesNotNagAParallelLead(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var result, description string
	items := []map[string]any{}
	for _, n := range []string{"parser", "lexer", "printer"} {
		items = append(items, map[string]any{"content": "Fix the " + n, "activeForm": "Fixing the " + n, "status": "in_progress"})
	}
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			mu.Lock()
			for _, tl := range r.Tools {
				if tl.Name == "TodoWrite" {
					description = tl.Description
				}
			}
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TodoWrite", map[string]any{"todos": items})}}
		}
		mu.Lock()
		result = r.LastToolResultText()
		mu.Unlock()
		return fakeapi.TextReply("planned")
	})
	if out, errOut, code := h.Run("-p", "fix the three packages with three agents in parallel"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.HasPrefix(result, "Task list updated") {
		t.Fatalf("TodoWrite answered %q", result)
	}
	for _, text := range []string{result, description} {
		if strings.Contains(text, "exactly one") {
			t.Errorf("TodoWrite tells a lead running agents in parallel to keep exactly one item in progress: %q", text)
		}
	}
}
