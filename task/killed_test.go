package task

import (
	"strings"
	"sync"
	"testing"
)

// TestResumeClosesUnfinishedTasksWithTheirReason: an agent and a shell
// command of an earlier process never reported their end; the resumed
// session's registry closes both, emitting task_notification with status
// stopped and reason unfinished_at_resume, the agent's with task_type
// local_agent and the command's with none (as Claude Code sends them), and
// the model is told each was killed.
func TestResumeClosesUnfinishedTasksWithTheirReason(t *testing.T) {
	home := t.TempDir()
	r := openReg(t, home, "s1")
	release := make(chan struct{})
	agent, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "slow agent", Background: true, Queue: NewQueue(), ToolUseID: "toolu_a"}, block(release, "x"))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Description: "slow command", Background: true, Queue: NewQueue(), ToolUseID: "toolu_b"}, block(release, "y"))
	if err != nil {
		t.Fatal(err)
	}
	closeNow(t, r) // the notifications are queued, never drained: as if the process died

	var mu sync.Mutex
	var events []Event
	r2, err := NewRegistry(Config{Home: home, SessionID: "s1", OnEvent: func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeNow(t, r2)
	q := NewQueue()
	ids, err := r2.NotifyKilled(q, nil, nil)
	if err != nil || len(ids) != 2 {
		t.Fatalf("NotifyKilled: %v, %v", ids, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{agent.ID(): "local_agent", sh.ID(): ""}
	if len(events) != 2 {
		t.Fatalf("events: %+v", events)
	}
	for _, ev := range events {
		typ, ok := want[ev.TaskID]
		if !ok || ev.Subtype != SubtypeTaskNotification || ev.Status != "stopped" || ev.Reason != "unfinished_at_resume" || ev.TaskType != typ || ev.Type != "system" || ev.SessionID != "s1" {
			t.Errorf("event %+v; want task_notification, stopped, unfinished_at_resume, task_type %q", ev, typ)
		}
	}
	items := q.Drain()
	if len(items) != 2 || !strings.Contains(items[0].ModelText(), "<status>killed</status>") {
		t.Errorf("the model's notifications: %+v", items)
	}
	if ids, _ := r2.NotifyKilled(NewQueue(), nil, nil); len(ids) != 0 {
		t.Errorf("the drained tasks were closed again: %v", ids)
	}
}
