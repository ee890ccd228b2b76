package permissions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// readInputs reads the hook inputs a logging hook wrote to dir, one file
// each.
func readInputs(t *testing.T, dir string) []map[string]any {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("no hook input was logged: %v", err)
	}
	var out []map[string]any
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s is not JSON: %v\n%s", e.Name(), err, data)
		}
		out = append(out, m)
	}
	return out
}

// logTo is a hook command that logs its input to a new file in dir.
func logTo(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return `cat > "$(mktemp ` + dir + `/in.XXXXXX)"`
}

// TestTaskCreatedHook creates two tasks in a team's shared list under a
// TaskCreated hook that refuses subjects with "forbidden": the first is
// taken back (its file is gone, the model reads the hook's reason), the
// second stays, and the hook read each task's id, subject and description.
func TestTaskCreatedHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var results []string
	c := clitest.NewConv()
	c.On("plan the tasks",
		clitest.Calls(clitest.Use("TeamCreate", map[string]any{"team_name": "guarded"})),
		clitest.Calls(clitest.Use("TaskCreate", map[string]any{"subject": "forbidden: delete prod", "description": "drop it all"})),
		func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskCreate", map[string]any{"subject": "write the notes", "description": "in notes.txt"})}}
		},
		func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
			return fakeapi.TextReply("planned")
		})
	h := clitest.New(t, c.Policy)
	logs := filepath.Join(h.Dir, "logs")
	guard := writeScript(t, h.Dir, "guard.sh", logTo(t, logs)+`
if grep -q '"task_subject":"forbidden' "$(ls -t `+logs+`/in.* | head -1)"; then echo "no forbidden tasks" >&2; exit 2; fi
`)
	h.Write(".cohort/settings.json", `{"hooks": {"TaskCreated": [{"hooks": [{"type": "command", "command": "`+guard+`"}]}]}}`)
	out, errOut, code := h.Run("-p", "plan the tasks", "--output-format", "json", "--flag", "agent_teams=on")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "no forbidden tasks") || strings.Contains(results[1], "refused") {
		t.Fatalf("tool results %q: want the first refused with the hook's reason, the second created", results)
	}
	tasks := filepath.Join(h.Vars["COHORT_HOME"], "teams", "guarded", "tasks")
	if _, err := os.Stat(filepath.Join(tasks, "1.json")); !os.IsNotExist(err) {
		t.Fatalf("the refused task 1 was kept: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(tasks, "2.json")); err != nil || !strings.Contains(string(data), "write the notes") {
		t.Fatalf("task 2 was not created: %s %v", data, err)
	}
	ins := readInputs(t, logs)
	if len(ins) != 2 {
		t.Fatalf("the hook ran %d times, want 2: %v", len(ins), ins)
	}
	seen := map[string]string{}
	for _, in := range ins {
		if in["hook_event_name"] != "TaskCreated" || in["task_description"] == nil {
			t.Fatalf("input %v", in)
		}
		seen[in["task_id"].(string)] = in["task_subject"].(string)
	}
	if seen["1"] != "forbidden: delete prod" || seen["2"] != "write the notes" {
		t.Fatalf("task ids and subjects the hook read: %v", seen)
	}
}

// TestPostToolBatchHook makes the model call Read twice in one message
// under a PostToolBatch hook that answers with additionalContext: the hook
// runs once for the pair, reads both calls with their results, and its
// context reaches the model once, after the results.
func TestPostToolBatchHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var next []string
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	a, b := h.Write("a.txt", "alpha\n"), h.Write("b.txt", "beta\n")
	c.On("read both",
		clitest.Calls(clitest.Use("Read", map[string]any{"file_path": a}), clitest.Use("Read", map[string]any{"file_path": b})),
		func(r *fakeapi.Request) fakeapi.Reply {
			last := r.Messages[len(r.Messages)-1]
			mu.Lock()
			for _, bl := range last.Content {
				next = append(next, bl.Type+":"+bl.Text)
			}
			mu.Unlock()
			return fakeapi.TextReply("read")
		})
	logs := filepath.Join(h.Dir, "logs")
	hook := writeScript(t, h.Dir, "batch.sh", logTo(t, logs)+`
echo '{"hookSpecificOutput": {"hookEventName": "PostToolBatch", "additionalContext": "both files are test fixtures"}}'
`)
	h.Write(".cohort/settings.json", `{"hooks": {"PostToolBatch": [{"hooks": [{"type": "command", "command": "`+hook+`"}]}]}}`)
	out, errOut, code := h.Run("-p", "read both", "--output-format", "json", "--allowedTools", "Read")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	ins := readInputs(t, logs)
	if len(ins) != 1 {
		t.Fatalf("the hook ran %d times, want once for the batch", len(ins))
	}
	calls, _ := ins[0]["tool_calls"].([]any)
	if len(calls) != 2 {
		t.Fatalf("tool_calls %v", ins[0]["tool_calls"])
	}
	for i, want := range []string{a, b} {
		call := calls[i].(map[string]any)
		input, _ := call["tool_input"].(map[string]any)
		if call["tool_name"] != "Read" || input["file_path"] != want || call["tool_use_id"] == "" || call["tool_response"] == nil {
			t.Fatalf("tool_calls[%d] = %v", i, call)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(next, "\n")
	if strings.Count(joined, "both files are test fixtures") != 1 || !strings.HasPrefix(next[0], "tool_result") || !strings.HasPrefix(next[1], "tool_result") {
		t.Fatalf("the message after the batch: %q", next)
	}
}

// TestStopFailureHook ends the lead's turn with a 429 that must not be
// retried: the StopFailure hook whose matcher is rate_limit runs with the
// error's kind and text; the one whose matcher is server_error does not;
// no Stop hook runs.
func TestStopFailureHook(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.FaultReply(fakeapi.SpendLimit) })
	limited, server, stop := filepath.Join(h.Dir, "limited"), filepath.Join(h.Dir, "server"), filepath.Join(h.Dir, "stop")
	h.Write(".cohort/settings.json", `{"hooks": {
  "StopFailure": [{"matcher": "rate_limit", "hooks": [{"type": "command", "command": "`+writeScript(t, h.Dir, "limited.sh", logTo(t, limited))+`"}]},
                  {"matcher": "server_error", "hooks": [{"type": "command", "command": "`+writeScript(t, h.Dir, "server.sh", logTo(t, server))+`"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "`+writeScript(t, h.Dir, "stop.sh", logTo(t, stop))+`"}]}]}}`)
	out, errOut, code := h.Run("-p", "anything", "--output-format", "json")
	if code == 0 {
		t.Fatalf("the run succeeded despite the API error:\n%s\n%s", out, errOut)
	}
	ins := readInputs(t, limited)
	if len(ins) != 1 || ins[0]["error"] != "rate_limit" || !strings.Contains(ins[0]["error_details"].(string), "429") || ins[0]["last_assistant_message"] == "" {
		t.Fatalf("StopFailure inputs %v\n%s\n%s", ins, out, errOut)
	}
	for _, dir := range []string{server, stop} {
		if got := readInputs(t, dir); len(got) != 0 {
			t.Fatalf("%s ran: %v", filepath.Base(dir), got)
		}
	}
}
