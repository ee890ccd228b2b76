package cohort

import (
	"encoding/json"
	"time"

	"github.com/cohort-dev/cohort/internal/streamjson"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
)

// Event types, as Claude Code's stream-json names them.
const (
	EventSystem    = "system"
	EventAssistant = "assistant"
	EventUser      = "user"
	EventResult    = "result"
	EventStream    = "stream_event" // a partial message (Config.PartialMessages)
)

// StopStructuredOutputRetries is the result subtype of a Run whose answers
// never matched Config.JSONSchema (Claude Code's name).
const StopStructuredOutputRetries = "error_max_structured_output_retries"

// System event subtypes.
const (
	SubtypeInit             = "init"
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskProgress     = "task_progress"
	SubtypeTaskNotification = "task_notification"
	SubtypeTaskUpdated      = task.SubtypeTaskUpdated            // Patch says what changed
	SubtypeBackgroundTasks  = task.SubtypeBackgroundTasksChanged // Tasks is the set now
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
	AddDirs       []string // more working directories, outside Cwd

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
	Patch          *TaskPatch       // task_updated
	Tasks          []BackgroundTask // background_tasks_changed: every running background task

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
const ProtocolVersion = "2.1.332"

// TaskPatch is what a task_updated event says changed; BackgroundTask one
// entry of a background_tasks_changed event.
type (
	TaskPatch      = task.Patch
	BackgroundTask = task.LiveTask
)

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
	o := streamjson.Object{}
	o.Add("type", e.Type)
	if e.Subtype != "" {
		o.Add("subtype", e.Subtype)
	}
	switch e.Type {
	case EventAssistant, EventUser:
		o.Add("message", e.Message)
		o.Add("parent_tool_use_id", streamjson.Nullable(e.ParentToolUseID))
		if len(e.ToolUseResult) > 0 {
			o.Add("tool_use_result", e.ToolUseResult)
		}
	case EventStream:
		o.Add("event", streamjson.StreamEvent(e.Stream))
		o.Add("parent_tool_use_id", streamjson.Nullable(e.ParentToolUseID))
	case EventResult:
		o.Add("is_error", e.IsError)
		o.Add("duration_ms", e.DurationMs)
		o.Add("duration_api_ms", e.DurationAPIMs)
		o.Add("num_turns", e.NumTurns)
		o.Add("result", e.Result)
		if e.IsError && e.Subtype != "success" {
			// Claude Code's error results say what went wrong in errors
			// (the Agent SDK reads it); result keeps the same text.
			o.Add("errors", []string{e.Result})
		}
	case EventSystem:
		e.systemFields(&o)
	}
	o.Add("session_id", e.SessionID)
	if e.Type == EventResult {
		o.Add("total_cost_usd", e.TotalCostUSD)
		usage := llm.Usage{}
		if e.Usage != nil {
			usage = *e.Usage
		}
		o.Add("usage", usage)
		modelUsage := e.ModelUsage
		if modelUsage == nil {
			modelUsage = map[string]*ModelUsage{}
		}
		o.Add("modelUsage", modelUsage)
		if len(e.Agents) > 0 {
			o.Add("agents", e.Agents)
		}
		denials := e.PermissionDenials
		if denials == nil {
			denials = []PermissionDenial{}
		}
		o.Add("permission_denials", denials)
		if len(e.StructuredOutput) > 0 {
			o.Add("structured_output", e.StructuredOutput)
		}
	}
	if e.AgentID != "" && e.Type != EventResult {
		o.Add("agent_id", e.AgentID)
	}
	o.Add("uuid", e.UUID)
	return o.MarshalJSON()
}

func (e Event) systemFields(o *streamjson.Object) {
	switch e.Subtype {
	case SubtypeInit:
		o.Add("cwd", e.Cwd)
		o.Add("tools", e.Tools)
		o.Add("model", e.Model)
		o.Add("permissionMode", e.PermissionMode)
		o.Add("apiKeySource", e.APIKeySource)
		o.Add("agents", streamjson.NonNil(e.AgentTypes))
		servers := e.MCPServers
		if servers == nil {
			servers = []MCPServer{}
		}
		o.Add("mcp_servers", servers)
		o.Add("slash_commands", streamjson.NonNil(e.SlashCommands))
		o.Add("skills", streamjson.NonNil(e.Skills))
		o.Add("plugins", []string{})
		o.Add("output_style", "default")
		o.Add("claude_code_version", ProtocolVersion)
		o.Add("cohort_version", e.Version)
		o.Add("additional_directories", streamjson.NonNil(e.AddDirs))
	case SubtypeTaskStarted, SubtypeTaskProgress, SubtypeTaskNotification:
		o.Add("task_id", e.TaskID)
		o.Opt("tool_use_id", e.ToolUseID)
		o.Opt("description", e.Description)
		o.Opt("task_type", e.TaskType)
		o.Opt("prompt", e.Prompt)
		o.Opt("subagent_type", e.SubagentType)
		if e.IsBackgrounded != nil {
			o.Add("is_backgrounded", *e.IsBackgrounded)
		}
		o.Opt("parent_task_id", e.ParentTaskID)
		o.Opt("status", e.Status)
		o.Opt("output_file", e.OutputFile)
		o.Opt("summary", e.Summary)
		if e.TaskUsage != nil {
			o.Add("usage", e.TaskUsage)
		}
		o.Opt("last_tool_name", e.LastToolName)
	case SubtypeTaskUpdated:
		o.Add("task_id", e.TaskID)
		o.Add("patch", e.Patch)
	case SubtypeBackgroundTasks:
		o.Add("tasks", streamjson.NonNil(e.Tasks))
	case SubtypeAPIRetry:
		o.Add("attempt", e.Attempt)
		o.Add("max_retries", e.MaxRetries)
		o.Add("retry_delay_ms", e.RetryDelayMs)
		if e.ErrorStatus != 0 {
			o.Add("error_status", e.ErrorStatus)
		} else {
			o.Add("error_status", nil)
		}
		o.Add("error", e.Error)
	case SubtypeCompactBoundary:
		o.Add("compact_metadata", map[string]any{"trigger": e.Trigger, "pre_tokens": e.PreTokens})
	case SubtypeTeam:
		o.Add("team", e.Team)
	}
}
