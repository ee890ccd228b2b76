package trace_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/trace"
)

// A Writer takes the same events as the CLI's other sinks; Validate reads
// the file back.
func Example() {
	dir, err := os.MkdirTemp("", "trace-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.json")

	w, err := trace.Create(path, trace.Config{Session: "demo"})
	if err != nil {
		panic(err)
	}
	// In the CLI: engine.Config.Sink and task.Config.OnEvent tee into
	// w.Engine and w.Task.
	var sink engine.Sink = w.Engine
	var onTask func(task.Event) = w.Task

	sink(engine.Event{Kind: engine.EventRequest, AgentID: "lead", Turn: 1})
	sink(engine.Event{Kind: engine.EventToolStart, AgentID: "lead", Tool: &engine.ToolEvent{ID: "call-1", Name: "Agent"}})
	onTask(task.Event{Subtype: task.SubtypeTaskStarted, TaskID: "a1", ToolUseID: "call-1",
		TaskType: "local_agent", SubagentType: "Explore", Description: "map the code"})
	sink(engine.Event{Kind: engine.EventRequest, AgentID: "agent-1", ParentToolUseID: "call-1", Turn: 1})
	onTask(task.Event{Subtype: task.SubtypeTaskNotification, TaskID: "a1", ToolUseID: "call-1", Status: "completed"})
	sink(engine.Event{Kind: engine.EventToolDone, AgentID: "lead", Tool: &engine.ToolEvent{ID: "call-1", Name: "Agent"}})
	if err := w.Close(); err != nil {
		panic(err)
	}

	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	sum, err := trace.Validate(f)
	if err != nil {
		panic(err)
	}
	fmt.Println(sum.Process)
	for _, tr := range sum.Tracks {
		fmt.Printf("%s: %d agent, %d tool\n", tr.Name, tr.Spans["agent"], tr.Spans["tool"])
	}
	// Output:
	// cohort demo
	// lead: 1 agent, 0 tool
	// lead · tools 1: 0 agent, 1 tool
	// Explore: map the code: 1 agent, 0 tool
}
