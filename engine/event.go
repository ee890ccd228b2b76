package engine

import (
	"encoding/json"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// EventKind names an engine event.
type EventKind string

// Engine events.
const (
	// EventStream forwards a raw model stream event (deltas) for live UIs.
	EventStream EventKind = "stream"
	// EventAssistant carries a complete assistant message.
	EventAssistant EventKind = "assistant"
	// EventUser carries a user-role message the engine added: tool results
	// and injected content.
	EventUser EventKind = "user"
	// EventToolStart and EventToolDone bracket one tool call.
	EventToolStart EventKind = "tool_start"
	EventToolDone  EventKind = "tool_done"
	// EventRequest marks the start of a model request (Turn counts the
	// agent's requests from 1); the matching EventAssistant ends it.
	EventRequest EventKind = "request"
	// EventRetry reports a model request being retried.
	EventRetry EventKind = "retry"
	// EventCompact reports that the history was compacted.
	EventCompact EventKind = "compact"
)

// Event is something that happened in an agent. Sinks must not retain or
// modify the pointed-to values.
type Event struct {
	Kind    EventKind
	AgentID string
	// ParentToolUseID is the id of the Agent call that spawned this agent;
	// empty for the lead.
	ParentToolUseID string
	Time            time.Time

	Stream  *llm.Event   // EventStream
	Message *llm.Message // EventAssistant, EventUser
	// Response is the complete model response behind an EventAssistant.
	Response *llm.Response
	Tool     *ToolEvent // EventToolStart, EventToolDone
	Retry    *llm.RetryInfo
	Compact  *CompactInfo
	// Turn numbers the agent's model requests (EventRequest, EventAssistant).
	Turn int
	// Origin is where an EventUser's content came from (session.Origin*;
	// empty for the user's own prompt).
	Origin string
}

// ToolEvent describes one tool call.
type ToolEvent struct {
	ID       string
	Name     string
	Input    json.RawMessage
	Result   *tool.Result // EventToolDone
	Duration time.Duration
	// Denied is the gate's reason when it refused the call (EventToolDone):
	// the call never ran and Result says so to the model.
	Denied string
}

// CompactInfo describes a compaction.
type CompactInfo struct {
	Trigger      string // CompactAuto or CompactManual
	TokensBefore int64
	Summary      string
	Kept         int // messages kept verbatim
}

// Sink receives events. It must be safe for concurrent use and return
// quickly; nil drops events.
type Sink func(Event)
