package task_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cohort-dev/cohort/task"
)

// A synchronous subagent that the user moves to the background: the Agent
// call returns early, and the result arrives later in the lead's queue.
func Example() {
	home, _ := os.MkdirTemp("", "cohort-example")
	defer os.RemoveAll(home)
	reg, err := task.NewRegistry(task.Config{Home: home, SessionID: "example"})
	if err != nil {
		panic(err)
	}
	defer reg.Close(context.Background())

	leadQueue := task.NewQueue()
	proceed := make(chan struct{})
	t, err := reg.Start(context.Background(), task.Spec{
		Kind: task.KindLocalAgent, Description: "Survey the API", ToolUseID: "toolu_01",
		Linked: true, Queue: leadQueue,
	}, func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		t.Output().WriteLine("reading api/...")
		t.RecordToolUse("Grep", "func Handle")
		<-proceed
		return task.Outcome{Text: "Twelve handlers, all documented."}, nil
	})
	if err != nil {
		panic(err)
	}

	// The user presses the background key while the Agent call waits.
	go reg.Background(t.ID())
	if _, err := t.Await(context.Background()); errors.Is(err, task.ErrBackgrounded) {
		fmt.Println("Agent call returns: async_launched")
	}

	close(proceed)
	leadQueue.Wait(context.Background())
	for _, item := range leadQueue.Drain() {
		n := item.Notification
		fmt.Println(n.Status, "-", n.Summary, "-", n.Result)
	}
	// Output:
	// Agent call returns: async_launched
	// completed - Agent "Survey the API" completed - Twelve handlers, all documented.
}
