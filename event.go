package cohort

import (
	"encoding/json"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// Event types, as Claude Code's stream-json names them.
const (
	EventSystem    = "system"
	EventAssistant = "assistant"
	EventUser      = "user"
	EventResult    = "result"
	EventStream    = "stream_event" // a partial message (Config.PartialMessages)
)

// System event subtypes.
const (
	SubtypeInit             = "init"
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskProgress     = "task_progress"
	SubtypeTaskNotification = "task_notification"
	SubtypeAPIRetry         = "api_retry"
	SubtypeCompactBoundary  = "compact_boundary"
	// SubtypeTeam is Cohort's: something happened in a team (Team says
	// what).
	SubtypeTeam = "team"
)

// Event is one thing that happened in a session, for any of its agents:
// the lead's and every subagent's, fork's and teammate's messages, task
// events, retries, team activity and, last, the result of a Run. Its fields
// are those of a Claude Code stream-json message, plus AgentID; its JSON
// encoding (MarshalJSON) is that message, so `cohort -p … --output-format
// stream-json` prints exactly the events Run yields.
type Event struct {
	Type    string
	Subtype string
	// SessionID is the session's id; UUID the event's own.
	SessionID string
	UUID      string
	// AgentID is the agent the event belongs to (empty for the session's
	// own events: init, result). ParentToolUseID is the Agent call that
	// spawned it, empty for the lead.
	AgentID         string
	ParentToolUseID string
	Time            time.Time

	// Message is an assistant or user message (the API's shape). A user
	// message that carries a tool result carries only that one, and
	// ToolUseResult is the tool's result in Claude Code's structured shape
	// (Write's {type, filePath, …}, Agent's usage), when it has one.
	Message       *Message
	ToolUseResult json.RawMessage
	// Stream is one streaming event of a response (stream_event).
	Stream *llm.Event

	// system/init: also the agent types the lead may spawn, the MCP
	// servers and their state, the slash commands, the skills, and the versions
	// (Cohort's, and the Claude Code release whose protocol it speaks).
	Cwd            string
	Tools          []string
	Model          string
	PermissionMode string
	APIKeySource   string
	AgentTypes     []string
	// MCPServers are the session's MCP servers and their states.
	MCPServers    []MCPServer
	SlashCommands []string
	Skills        []string
	Version       string

	// system/task_*: the task's facts, as Claude Code reports them.
	TaskID         string
	ToolUseID      string
	Description    string
	TaskType       string
	Prompt         string
	SubagentType   string
	IsBackgrounded *bool
	ParentTaskID   string
	Status         string
	OutputFile     string
	Summary        string
	TaskUsage      *TaskUsage
	LastToolName   string

	// system/api_retry: the attempt about to start, the most retries there
	// will be, the wait before it, the failed attempt's HTTP status (0: no
	// response) and what failed, in one line a person can read
	// ("API unreachable at URL (connection refused); retry 3/10 in 4 s").
	Attempt      int
	MaxRetries   int
	RetryDelayMs int64
	ErrorStatus  int
	Error        string

	// system/compact_boundary.
	Trigger   string // "auto" or "manual"
	PreTokens int64

	// system/team.
	Team *TeamEvent

	// result.
	Result        string
	IsError       bool
	NumTurns      int
	DurationMs    int64
	DurationAPIMs int64
	TotalCostUSD  float64
	Usage         *llm.Usage
	// ModelUsage is usage and cost per model (a session whose agents run
	// on several models reports each one's share).
	ModelUsage map[string]*ModelUsage
	// Agents is every agent's usage, cost and time (agentusage.go).
	Agents []AgentUsage
	// PermissionDenials is every tool call the permission checks refused
	// since the previous result (during the Run, and before it for
	// background agents), for any agent of this process, in the order they
	// were refused.
	PermissionDenials []PermissionDenial
	// StructuredOutput is the final answer as JSON when Config.JSONSchema
	// asked for one and it matched.
	StructuredOutput json.RawMessage
}

// PermissionDenial is one tool call the permission checks refused, as
// Claude Code's result lists it (permission_denials: tool_name,
// tool_use_id, tool_input), plus Cohort's agent_id and reason: which agent
// asked and the reason the model was given. A call a PreToolUse hook
// blocked is not one: hooks are the user's own checks, and their reason
// reaches the model as the tool's result.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
	AgentID   string          `json:"agent_id,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// ProtocolVersion is the Claude Code release whose stream-json output and
// control protocol Cohort speaks; system/init reports it as
// claude_code_version, which Agent SDK hosts read.
const ProtocolVersion = "2.1.328"

// ModelUsage is one model's share of a session's usage, as Claude Code's
// result reports it (modelUsage).
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	CostUSD                  float64 `json:"costUSD"`
}

// Message is an API message inside an assistant or user event.
type Message struct {
	ID         string         `json:"id,omitempty"`
	Type       string         `json:"type"` // "message"
	Role       llm.Role       `json:"role"`
	Model      string         `json:"model,omitempty"`
	Content    []llm.Block    `json:"content"`
	StopReason llm.StopReason `json:"stop_reason,omitempty"`
	Usage      *llm.Usage     `json:"usage,omitempty"`
}

// TaskUsage is a task's totals as task events report them.
type TaskUsage struct {
	TotalTokens int64 `json:"total_tokens"`
	ToolUses    int   `json:"tool_uses"`
	DurationMs  int64 `json:"duration_ms"`
}

// TeamEvent kinds.
const (
	TeamCreated           = "team_created"
	TeamDeleted           = "team_deleted"
	TeamJoined            = "joined"
	TeamMessage           = "message"   // sent
	TeamDelivered         = "delivered" // reached its reader's queue
	TeamIdle              = "idle"
	TeamShutdownRequested = "shutdown_requested"
	TeamShutdown          = "shutdown"
	TeamDead              = "dead"
	TeamPermission        = "permission"
	TeamPlan              = "plan"
)

// TeamEvent is one thing that happened in a team: Kind is team_created,
// team_deleted, joined, message (sent), delivered (read into its
// reader's queue), idle, shutdown_requested (To lists the
// teammates asked, comma-separated), shutdown, dead, permission or plan.
type TeamEvent struct {
	Kind   string `json:"kind"`
	Team   string `json:"team"`
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Text   string `json:"text,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// MarshalJSON encodes the event as a Claude Code stream-json line: the
// fields its type and subtype carry, in Claude Code's names, with
// parent_tool_use_id null for the lead's messages.
func (e Event) MarshalJSON() ([]byte, error) {
	o := object{{"type", e.Type}}
	if e.Subtype != "" {
		o.add("subtype", e.Subtype)
	}
	switch e.Type {
	case EventAssistant, EventUser:
		o.add("message", e.Message)
		o.add("parent_tool_use_id", nullable(e.ParentToolUseID))
		if len(e.ToolUseResult) > 0 {
			o.add("tool_use_result", e.ToolUseResult)
		}
	case EventStream:
		o.add("event", streamJSON(e.Stream))
		o.add("parent_tool_use_id", nullable(e.ParentToolUseID))
	case EventResult:
		o.add("is_error", e.IsError)
		o.add("duration_ms", e.DurationMs)
		o.add("duration_api_ms", e.DurationAPIMs)
		o.add("num_turns", e.NumTurns)
		o.add("result", e.Result)
		if e.IsError && e.Subtype != "success" {
			// Claude Code's error results say what went wrong in errors
			// (the Agent SDK reads it); result keeps the same text.
			o.add("errors", []string{e.Result})
		}
	case EventSystem:
		e.systemFields(&o)
	}
	o.add("session_id", e.SessionID)
	if e.Type == EventResult {
		o.add("total_cost_usd", e.TotalCostUSD)
		usage := llm.Usage{}
		if e.Usage != nil {
			usage = *e.Usage
		}
		o.add("usage", usage)
		modelUsage := e.ModelUsage
		if modelUsage == nil {
			modelUsage = map[string]*ModelUsage{}
		}
		o.add("modelUsage", modelUsage)
		if len(e.Agents) > 0 {
			o.add("agents", e.Agents)
		}
		denials := e.PermissionDenials
		if denials == nil {
			denials = []PermissionDenial{}
		}
		o.add("permission_denials", denials)
		if len(e.StructuredOutput) > 0 {
			o.add("structured_output", e.StructuredOutput)
		}
	}
	if e.AgentID != "" && e.Type != EventResult {
		o.add("agent_id", e.AgentID)
	}
	o.add("uuid", e.UUID)
	return o.MarshalJSON()
}

func (e Event) systemFields(o *object) {
	switch e.Subtype {
	case SubtypeInit:
		o.add("cwd", e.Cwd)
		o.add("tools", e.Tools)
		o.add("model", e.Model)
		o.add("permissionMode", e.PermissionMode)
		o.add("apiKeySource", e.APIKeySource)
		o.add("agents", nonNil(e.AgentTypes))
		servers := e.MCPServers
		if servers == nil {
			servers = []MCPServer{}
		}
		o.add("mcp_servers", servers)
		o.add("slash_commands", nonNil(e.SlashCommands))
		o.add("skills", nonNil(e.Skills))
		o.add("plugins", []string{})
		o.add("output_style", "default")
		o.add("claude_code_version", ProtocolVersion)
		o.add("cohort_version", e.Version)
	case SubtypeTaskStarted, SubtypeTaskProgress, SubtypeTaskNotification:
		o.add("task_id", e.TaskID)
		o.opt("tool_use_id", e.ToolUseID)
		o.opt("description", e.Description)
		o.opt("task_type", e.TaskType)
		o.opt("prompt", e.Prompt)
		o.opt("subagent_type", e.SubagentType)
		if e.IsBackgrounded != nil {
			o.add("is_backgrounded", *e.IsBackgrounded)
		}
		o.opt("parent_task_id", e.ParentTaskID)
		o.opt("status", e.Status)
		o.opt("output_file", e.OutputFile)
		o.opt("summary", e.Summary)
		if e.TaskUsage != nil {
			o.add("usage", e.TaskUsage)
		}
		o.opt("last_tool_name", e.LastToolName)
	case SubtypeAPIRetry:
		o.add("attempt", e.Attempt)
		o.add("max_retries", e.MaxRetries)
		o.add("retry_delay_ms", e.RetryDelayMs)
		if e.ErrorStatus != 0 {
			o.add("error_status", e.ErrorStatus)
		} else {
			o.add("error_status", nil)
		}
		o.add("error", e.Error)
	case SubtypeCompactBoundary:
		o.add("compact_metadata", map[string]any{"trigger": e.Trigger, "pre_tokens": e.PreTokens})
	case SubtypeTeam:
		o.add("team", e.Team)
	}
}

// streamJSON renders a raw stream event in the API's SSE data shape
// (message_start, content_block_start, content_block_delta, …).
func streamJSON(ev *llm.Event) any {
	if ev == nil {
		return nil
	}
	m := map[string]any{}
	switch ev.Type {
	case llm.EventStart:
		m["type"] = "message_start"
		m["message"] = map[string]any{"type": "message", "role": "assistant", "content": []llm.Block{}, "usage": ev.Usage}
	case llm.EventBlockStart:
		m["type"], m["index"], m["content_block"] = "content_block_start", ev.Index, ev.Block
	case llm.EventDelta:
		m["type"], m["index"] = "content_block_delta", ev.Index
		m["delta"] = map[string]any{"type": string(ev.DeltaKind), deltaField(ev.DeltaKind): ev.Delta}
	case llm.EventBlockStop:
		m["type"], m["index"] = "content_block_stop", ev.Index
	case llm.EventDone:
		m["type"] = "message_stop"
	default:
		m["type"] = string(ev.Type)
	}
	return m
}

func deltaField(k llm.DeltaKind) string {
	switch k {
	case llm.DeltaInputJSON:
		return "partial_json"
	case llm.DeltaThinking:
		return "thinking"
	case llm.DeltaSignature:
		return "signature"
	}
	return "text"
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// object is a JSON object that keeps its keys in order.
type object []field

type field struct {
	k string
	v any
}

func (o *object) add(k string, v any) { *o = append(*o, field{k, v}) }

func (o *object) opt(k, v string) {
	if v != "" {
		o.add(k, v)
	}
}

func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
