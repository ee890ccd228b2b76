package cohort

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/callorder"
	"github.com/cohort-dev/cohort/internal/spill"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/transcript"
)

// eventMemory is how many events wait in memory for a consumer that does
// not read them; more go to a spill file (read back in order).
const eventMemory = 4096

// emitter turns what every agent of the session does — engine events,
// task events, team events — into Events, in one queue that Run reads.
// It is called from many goroutines and never blocks them: the queue
// holds eventMemory events in memory and spills the rest to a temporary
// file. The only events it coalesces are task_progress events of one task
// still waiting to be read (the newer replaces the older); nothing is
// dropped.
type emitter struct {
	q         *spill.Queue[Event]
	sessionID string
	partial   bool

	mu sync.Mutex
	// results holds what each finished tool call reports in Claude Code's
	// structured shape, until the user message carrying its result is
	// emitted (tool_use_result).
	results map[string]json.RawMessage
	// denials are the calls the permission checks refused since the last
	// takeDenials.
	denials []PermissionDenial
	// lead is the lead's agent id: its own prompts are not events (the
	// caller passed them to Run; Claude Code echoes them only with
	// --replay-user-messages, which the stream-json server does itself).
	lead string
	// order keeps a task's events behind the message that started it.
	order callorder.Gate[Event]
}

// setLead names the lead, whose prompts are not emitted.
func (e *emitter) setLead(id string) {
	e.mu.Lock()
	e.lead = id
	e.mu.Unlock()
}

// isLeadPrompt reports whether ev is the lead's own prompt.
func (e *emitter) isLeadPrompt(ev engine.Event) bool {
	if ev.Origin != "" || ev.ParentToolUseID != "" {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lead != "" && ev.AgentID == e.lead
}

func newEmitter(sessionID, tmpDir string, partial bool) *emitter {
	if tmpDir == "" {
		tmpDir = os.TempDir()
	}
	q := spill.New(spill.Config[Event]{Memory: eventMemory, Dir: tmpDir, Key: func(ev Event) string {
		if ev.Subtype == SubtypeTaskProgress {
			return "progress:" + ev.TaskID
		}
		return ""
	}})
	return &emitter{q: q, sessionID: sessionID, partial: partial, results: map[string]json.RawMessage{}}
}

func (e *emitter) push(ev Event) {
	ev.SessionID = e.sessionID
	if ev.UUID == "" {
		ev.UUID = transcript.NewID()
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	e.q.Push(ev)
}

// engine handles one agent's engine event.
func (e *emitter) engine(ev engine.Event) {
	base := Event{AgentID: ev.AgentID, ParentToolUseID: ev.ParentToolUseID, Time: ev.Time}
	switch ev.Kind {
	case engine.EventAssistant:
		m := &Message{Type: "message", Role: llm.RoleAssistant, Content: ev.Message.Content}
		if r := ev.Response; r != nil {
			u := r.Usage
			m.ID, m.Model, m.StopReason, m.Usage = r.ID, r.Model, r.StopReason, &u
		}
		base.Type, base.Message = EventAssistant, m
		e.push(base)
		e.order.Emitted(callorder.CallIDs(ev.Message.Content), e.push)
	case engine.EventUser:
		if e.isLeadPrompt(ev) {
			return
		}
		e.user(base, ev.Message.Content)
	case engine.EventToolDone:
		if ev.Tool == nil || ev.Tool.Result == nil {
			return
		}
		if ev.Tool.Denied != "" {
			input := ev.Tool.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			e.mu.Lock()
			e.denials = append(e.denials, PermissionDenial{ToolName: ev.Tool.Name, ToolUseID: ev.Tool.ID,
				ToolInput: input, AgentID: ev.AgentID, Reason: ev.Tool.Denied})
			e.mu.Unlock()
		}
		if raw := ev.Tool.Result.Structured(); raw != nil {
			e.mu.Lock()
			e.results[ev.Tool.ID] = raw
			e.mu.Unlock()
		}
	case engine.EventStream:
		if ev.Stream == nil {
			return
		}
		if b := ev.Stream.Block; ev.Stream.Type == llm.EventBlockStart && b != nil && b.Type == llm.BlockToolUse {
			e.order.Streaming(b.ID)
		}
		if !e.partial {
			return
		}
		s := *ev.Stream
		s.Response, s.Retry = nil, nil
		base.Type, base.Stream = EventStream, &s
		e.push(base)
	case engine.EventRetry:
		if ev.Retry == nil {
			return
		}
		e.order.Flush(e.push) // the partial message will not be emitted
		base.Type, base.Subtype = EventSystem, SubtypeAPIRetry
		r := ev.Retry
		base.Attempt, base.RetryDelayMs = r.Attempt, r.Wait.Milliseconds()
		base.MaxRetries = max(r.MaxAttempts-1, 0)
		base.ErrorStatus = r.Status
		base.Error = r.String()
		e.push(base)
	case engine.EventCompact:
		if ev.Compact == nil {
			return
		}
		base.Type, base.Subtype = EventSystem, SubtypeCompactBoundary
		base.Trigger, base.PreTokens = ev.Compact.Trigger, ev.Compact.TokensBefore
		e.push(base)
	}
}

// takeDenials returns the denials recorded since the last call.
func (e *emitter) takeDenials() []PermissionDenial {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.denials
	e.denials = nil
	return d
}

// user emits a user message as Claude Code does: each tool result as a
// user message of its own (with the tool's structured result), then the
// other blocks (prompts, notifications) together.
func (e *emitter) user(base Event, content []llm.Block) {
	var rest []llm.Block
	for _, b := range content {
		if b.Type != llm.BlockToolResult {
			rest = append(rest, b)
			continue
		}
		ev := base
		ev.Type = EventUser
		ev.Message = &Message{Type: "message", Role: llm.RoleUser, Content: []llm.Block{b}}
		e.mu.Lock()
		ev.ToolUseResult = e.results[b.ToolUseID]
		delete(e.results, b.ToolUseID)
		e.mu.Unlock()
		e.push(ev)
	}
	if len(rest) > 0 {
		base.Type = EventUser
		base.Message = &Message{Type: "message", Role: llm.RoleUser, Content: rest}
		e.push(base)
	}
}

// task handles a task registry event.
func (e *emitter) task(ev task.Event) {
	out := Event{Type: EventSystem, Subtype: ev.Subtype, UUID: ev.UUID,
		TaskID: ev.TaskID, ToolUseID: ev.ToolUseID, Description: ev.Description, TaskType: ev.TaskType,
		Prompt: ev.Prompt, SubagentType: ev.SubagentType, IsBackgrounded: ev.IsBackgrounded,
		ParentTaskID: ev.ParentTaskID, Status: ev.Status, OutputFile: ev.OutputFile, Summary: ev.Summary,
		LastToolName: ev.LastToolName, Patch: ev.Patch, Tasks: ev.Tasks}
	if ev.Usage != nil {
		out.TaskUsage = &TaskUsage{TotalTokens: ev.Usage.TotalTokens, ToolUses: ev.Usage.ToolUses, DurationMs: ev.Usage.DurationMs}
	}
	e.order.Admit(ev.ToolUseID, out, e.push)
}

// team handles a team event.
func (e *emitter) team(ev teammate.Event) {
	e.push(Event{Type: EventSystem, Subtype: SubtypeTeam,
		Team: &TeamEvent{Kind: ev.Kind, Team: ev.Team, From: ev.From, To: ev.To, Text: ev.Text, Detail: ev.Detail}})
}
