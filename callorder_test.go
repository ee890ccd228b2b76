package cohort

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestATaskStartsAfterTheMessageThatCalledIt: the engine starts an agent as
// soon as its tool_use block is complete, while the message goes on
// streaming; the session's events still show the message first, as Claude
// Code's do, so a reader never meets a task_started whose tool_use_id it
// has not seen. The lead's message streams its text for about half a
// second after the call, long after the agent starts (without
// internal/callorder, task_started came first in every run).
func TestATaskStartsAfterTheMessageThatCalledIt(t *testing.T) {
	e := newEnv(t)
	e.srv.Close()
	e.srv = fakeapi.New(fakeapi.Config{Policy: e.rt.policy, OutputTokensPerSecond: 1000})
	t.Cleanup(e.srv.Close)
	const callID = "toolu_order01"
	e.rt.on("SUBTASK order", func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("done")}}
	})
	e.rt.on("start one agent", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() > 1 {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("all done")}}
		}
		return fakeapi.Reply{Content: []fakeapi.Block{
			fakeapi.ToolUseBlock(callID, "Agent", map[string]any{"description": "order check",
				"prompt": "SUBTASK order", "subagent_type": "general-purpose"}),
			fakeapi.TextBlock(strings.Repeat("While it runs, a long explanation follows. ", 50)),
		}}
	})
	s := e.open(e.config())
	evs := collect(t, s, "start one agent")
	called, started := -1, -1
	for i, ev := range evs {
		if ev.Type == EventAssistant && ev.Message != nil && called < 0 {
			for _, b := range ev.Message.Content {
				if b.ID == callID {
					called = i
				}
			}
		}
		if ev.Subtype == SubtypeTaskStarted && ev.ToolUseID == callID && started < 0 {
			started = i
		}
	}
	if called < 0 || started < 0 {
		t.Fatalf("want the call's message and its task_started, got %d and %d of %d events", called, started, len(evs))
	}
	if started < called {
		t.Fatalf("task_started (event %d) came before the message that called it (event %d)", started, called)
	}
}
