package sdkproto

import (
	"encoding/json"
	"sync"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm"
)

// The messages of the session's agent tasks, as this stream carried them,
// for get_task_output's paging: each task's messages are the assistant
// events, and the user events that carry a tool's result, whose
// parent_tool_use_id is the Agent call that started the task (its
// task_started tool_use_id). What the agent was told (its prompt,
// messages to it) is left out, as Claude Code leaves it out.

// keptFrames bounds one agent's kept messages; older ones are let go (a
// cursor that names one reads as reset).
const keptFrames = 4096

// pageBytes is about the most one page carries.
const pageBytes = 1 << 20

type frame struct {
	uuid string
	line json.RawMessage
}

type agentLog struct {
	mu     sync.Mutex
	call   map[string]string // task id → its Agent call's tool_use_id
	agent  map[string]bool   // task id → an agent's (not a shell's) task
	ended  map[string]bool   // task id → task_notification seen
	frames map[string][]frame
	wake   chan struct{} // closed (and replaced) whenever the log grows
}

func newAgentLog() *agentLog {
	return &agentLog{call: map[string]string{}, agent: map[string]bool{}, ended: map[string]bool{},
		frames: map[string][]frame{}, wake: make(chan struct{})}
}

// note records what ev says about agent tasks, given its encoding.
func (l *agentLog) note(ev cohort.Event, line json.RawMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case ev.Type == cohort.EventSystem && ev.Subtype == cohort.SubtypeTaskStarted:
		l.call[ev.TaskID] = ev.ToolUseID
		l.agent[ev.TaskID] = ev.TaskType != "local_bash"
	case ev.Type == cohort.EventSystem && ev.Subtype == cohort.SubtypeTaskNotification:
		l.ended[ev.TaskID] = true
	case (ev.Type == cohort.EventAssistant || isToolResult(ev)) && ev.ParentToolUseID != "":
		fs := append(l.frames[ev.ParentToolUseID], frame{uuid: ev.UUID, line: line})
		if len(fs) > keptFrames {
			fs = fs[len(fs)-keptFrames:]
		}
		l.frames[ev.ParentToolUseID] = fs
	default:
		return
	}
	close(l.wake)
	l.wake = make(chan struct{})
}

// isAgent reports whether id is an agent task this stream announced.
func (l *agentLog) isAgent(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.agent[id]
}

// page is one answer about an agent task's messages.
type page struct {
	Frames []json.RawMessage `json:"frames"`
	After  *string           `json:"after"`
	Last   *string           `json:"last"`
	Reset  bool              `json:"reset,omitempty"`
	more   bool
	ended  bool
	wake   <-chan struct{}
}

// page reads the messages after the one named after (all of them when
// after is nil; the newest, with Reset, when it names none kept), up to
// pageBytes.
func (l *agentLog) page(id string, after *string) page {
	l.mu.Lock()
	defer l.mu.Unlock()
	fs := l.frames[l.call[id]]
	p := page{Frames: []json.RawMessage{}, ended: l.ended[id], wake: l.wake}
	start := 0
	if after != nil {
		start = -1
		for i, f := range fs {
			if f.uuid == *after {
				start = i + 1
				break
			}
		}
		if start < 0 {
			p.Reset, start = true, 0
		}
	}
	if start > 0 {
		u := fs[start-1].uuid
		p.After = &u
	}
	size := 0
	for _, f := range fs[start:] {
		if size > 0 && size+len(f.line) > pageBytes {
			p.more = true
			break
		}
		size += len(f.line)
		p.Frames = append(p.Frames, f.line)
		u := f.uuid
		p.Last = &u
	}
	if p.Last == nil {
		p.Last = p.After
	}
	return p
}

// isToolResult reports whether ev is a user message that carries a tool's
// result (not what the agent was told: its prompt, messages to it).
func isToolResult(ev cohort.Event) bool {
	return ev.Type == cohort.EventUser && ev.Message != nil && len(ev.Message.Content) > 0 &&
		ev.Message.Content[0].Type == llm.BlockToolResult
}
