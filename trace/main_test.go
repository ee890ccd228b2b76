package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		crashHelper() // never returns
	}
	goleak.VerifyTestMain(m)
}

// clock is a fake clock that steps forward by a fixed amount on every
// reading; safe for concurrent use.
type clock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func newClock(step time.Duration) *clock {
	return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), step: step}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	c.now = c.now.Add(c.step)
	return t
}

// newWriter creates a writer on a temp file with a fake clock.
func newWriter(t testing.TB, cfg Config) (*Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.trace.json")
	if cfg.Now == nil {
		cfg.Now = newClock(time.Millisecond).Now
	}
	w, err := Create(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, path
}

// feed sends engine.Event and task.Event values to w in order.
func feed(w *Writer, evs ...any) {
	for _, e := range evs {
		switch e := e.(type) {
		case engine.Event:
			w.Engine(e)
		case task.Event:
			w.Task(e)
		default:
			panic("feed: not an event")
		}
	}
}

// Event builders. parent is the ParentToolUseID (empty for the lead).

func req(agent, parent string, n int) engine.Event {
	return engine.Event{Kind: engine.EventRequest, AgentID: agent, ParentToolUseID: parent, Turn: n}
}

func token(agent, parent string) engine.Event {
	return engine.Event{Kind: engine.EventStream, AgentID: agent, ParentToolUseID: parent,
		Stream: &llm.Event{Type: llm.EventDelta, DeltaKind: llm.DeltaText, Delta: "x"}}
}

// answer is the model's response to turn n, asking for the tool calls
// named by id.
func answer(agent, parent string, n int, calls ...string) engine.Event {
	resp := &llm.Response{Model: "claude-test", StopReason: llm.StopEndTurn,
		Usage: llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadInputTokens: 1000}}
	resp.Content = []llm.Block{llm.Text("ok")}
	for _, id := range calls {
		resp.Content = append(resp.Content, llm.Block{Type: llm.BlockToolUse, ID: id, Name: "Read", Input: json.RawMessage(`{}`)})
		resp.StopReason = llm.StopToolUse
	}
	msg := resp.Message()
	return engine.Event{Kind: engine.EventAssistant, AgentID: agent, ParentToolUseID: parent, Turn: n,
		Message: &msg, Response: resp}
}

func toolStart(agent, parent, id, name, input string) engine.Event {
	return engine.Event{Kind: engine.EventToolStart, AgentID: agent, ParentToolUseID: parent,
		Tool: &engine.ToolEvent{ID: id, Name: name, Input: json.RawMessage(input)}}
}

func toolDone(agent, parent, id, name string, failed bool) engine.Event {
	res := tool.Text("done")
	if failed {
		res = tool.Errorf("no such file")
	}
	return engine.Event{Kind: engine.EventToolDone, AgentID: agent, ParentToolUseID: parent,
		Tool: &engine.ToolEvent{ID: id, Name: name, Result: &res, Duration: 3 * time.Millisecond}}
}

func retry(agent, parent string) engine.Event {
	return engine.Event{Kind: engine.EventRetry, AgentID: agent, ParentToolUseID: parent,
		Retry: &llm.RetryInfo{Attempt: 2, Wait: 500 * time.Millisecond, Err: errors.New("overloaded")}}
}

func compacted(agent, parent string) engine.Event {
	return engine.Event{Kind: engine.EventCompact, AgentID: agent, ParentToolUseID: parent,
		Compact: &engine.CompactInfo{TokensBefore: 150000, Summary: "long summary", Kept: 4}}
}

func started(taskID, kind, call, desc, subagentType string) task.Event {
	bg := false
	return task.Event{Type: "system", Subtype: task.SubtypeTaskStarted, TaskID: taskID, ToolUseID: call,
		Description: desc, TaskType: kind, SubagentType: subagentType, IsBackgrounded: &bg, Prompt: "a long prompt"}
}

func progress(taskID, call string) task.Event {
	return task.Event{Type: "system", Subtype: task.SubtypeTaskProgress, TaskID: taskID, ToolUseID: call,
		Usage: &task.Usage{TotalTokens: 10}}
}

func notified(taskID, call, status string) task.Event {
	return task.Event{Type: "system", Subtype: task.SubtypeTaskNotification, TaskID: taskID, ToolUseID: call,
		Status: status, Summary: "Agent finished", Usage: &task.Usage{TotalTokens: 1200, ToolUses: 2, DurationMs: 40}}
}

// subagent is the whole life of a subagent spawned by call: two turns,
// the first with two parallel tool calls.
func subagent(taskID, agent, call, desc string) []any {
	return []any{
		started(taskID, "local_agent", call, desc, "Explore"),
		req(agent, call, 1),
		token(agent, call),
		answer(agent, call, 1, call+"-r1", call+"-r2"),
		toolStart(agent, call, call+"-r1", "Read", `{"file_path": "/src/a.go"}`),
		toolStart(agent, call, call+"-r2", "Grep", `{"pattern": "func main"}`),
		toolDone(agent, call, call+"-r2", "Grep", false),
		toolDone(agent, call, call+"-r1", "Read", false),
		progress(taskID, call),
		req(agent, call, 2),
		answer(agent, call, 2),
		notified(taskID, call, "completed"),
	}
}

// interleave merges event lists round robin, as concurrent agents'
// events arrive.
func interleave(lists ...[]any) []any {
	var out []any
	for i := 0; ; i++ {
		more := false
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// validateFile runs Validate on the file at path.
func validateFile(t testing.TB, path string) Summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := Validate(f)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return sum
}

// fileEvents decodes a closed trace file.
func fileEvents(t testing.TB, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []map[string]any
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatalf("the trace is not a JSON array: %v", err)
	}
	return evs
}

// find returns the events with the given ph and name.
func find(evs []map[string]any, ph, name string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["ph"] == ph && e["name"] == name {
			out = append(out, e)
		}
	}
	return out
}

// crashHelperEnv names the file the crash helper writes; see
// TestCrashLeavesOpenableFile.
const crashHelperEnv = "COHORT_TRACE_CRASH_HELPER"

// crashHelper writes events and exits without closing the writer, as a
// run that crashes does.
func crashHelper() {
	w, err := Create(os.Getenv(crashHelperEnv), Config{BufferSize: 4 << 10})
	if err != nil {
		os.Exit(2)
	}
	for i := range 200 {
		feed(w, subagent(fmt.Sprintf("a%03d", i), fmt.Sprintf("agent-%d", i), fmt.Sprintf("c%d", i), "crash")...)
	}
	os.Exit(3)
}
