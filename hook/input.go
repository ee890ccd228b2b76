package hook

import "encoding/json"

// Input is the JSON document a hook command reads on stdin. The common
// fields come first; the per-event fields are set only for their event.
// Field names are Claude Code's, plus Cohort's agent fields (see the
// package doc).
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  Event  `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`
	// PromptID identifies the user prompt the event follows from (a new
	// one per UserPromptSubmit); absent before the first prompt.
	PromptID string `json:"prompt_id,omitempty"`

	// Cohort's additions: which agent the event belongs to. Depth is 0 for
	// the lead; AgentID and AgentType are empty for a lead started without
	// an agent definition; ParentToolUseID is the id of the Agent call that
	// spawned the agent.
	AgentID         string `json:"agent_id,omitempty"`
	AgentType       string `json:"agent_type,omitempty"`
	Depth           int    `json:"depth"`
	ParentToolUseID string `json:"parent_tool_use_id,omitempty"`
	// Effort is the agent's effort level (Subject.Effort; DefaultEffort
	// when it sets none); absent when the front end does not say.
	Effort *EffortLevel `json:"effort,omitempty"`

	// PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest.
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// ToolResponse (PostToolUse) is the tool's structured result
	// (tool.Result.Response: Write's {type, filePath, content,
	// structuredPatch, originalFile}, Bash's {stdout, stderr, interrupted,
	// isImage}, …), or the result's text as a JSON string for a tool that
	// has no structured shape.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Error is the text of the failed result (PostToolUseFailure), or the
	// kind of API error that ended the turn (StopFailure: rate_limit,
	// overloaded, invalid_request, …, Claude Code's names).
	Error string `json:"error,omitempty"`
	// IsInterrupt (PostToolUseFailure) says the call failed because the
	// agent was stopped while it ran.
	IsInterrupt *bool `json:"is_interrupt,omitempty"`
	// ToolCalls (PostToolBatch) are every call of one model message, with
	// their results: [{tool_name, tool_input, tool_use_id, tool_response}].
	ToolCalls []BatchCall `json:"tool_calls,omitempty"`
	// DurationMs (PostToolUse, PostToolUseFailure) is how long the tool ran.
	DurationMs *int64 `json:"duration_ms,omitempty"`
	// PermissionSuggestions (PermissionRequest) are the rule updates that
	// would allow the call from now on.
	PermissionSuggestions json.RawMessage `json:"permission_suggestions,omitempty"`

	// UserPromptSubmit and SubagentStart.
	Prompt string `json:"prompt,omitempty"`

	// Stop and SubagentStop: set when the agent is already continuing
	// because a Stop hook blocked it, so a hook can avoid looping forever.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	// Stop, SubagentStop, StopFailure: the text of the agent's last
	// message.
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	// Stop, SubagentStop: the agent's background work still running, and
	// its scheduled prompts (Cohort has none: always empty).
	BackgroundTasks *[]BackgroundTask `json:"background_tasks,omitempty"`
	SessionCrons    *[]struct{}       `json:"session_crons,omitempty"`
	// SubagentStop: the subagent's own transcript.
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`
	// StopFailure: the error's text.
	ErrorDetails string `json:"error_details,omitempty"`

	// TeammateIdle, TaskCompleted.
	TeammateName string `json:"teammate_name,omitempty"`
	TeamName     string `json:"team_name,omitempty"`

	// TaskCompleted.
	TaskID          string `json:"task_id,omitempty"`
	TaskSubject     string `json:"task_subject,omitempty"`
	TaskDescription string `json:"task_description,omitempty"`
	Status          string `json:"status,omitempty"`
	Summary         string `json:"summary,omitempty"`

	// WorktreeCreate, WorktreeRemove.
	WorktreePath string `json:"worktree_path,omitempty"`
	Branch       string `json:"branch,omitempty"`

	// SessionStart: why the session starts (startup, resume, clear,
	// compact) and the lead's model. Interrupt: who interrupted (user,
	// session, system).
	Source string `json:"source,omitempty"`
	Model  string `json:"model,omitempty"`

	// SessionEnd: why it ends (clear, logout, prompt_input_exit, other).
	// Interrupt: why (stop, permission_denied, rewind, other).
	EndReason string `json:"reason,omitempty"`
	// Interrupt: through what (terminal, client).
	Via string `json:"via,omitempty"`

	// Notification: the text shown to the user and its kind
	// (permission_prompt, idle_prompt, …).
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`

	// PreCompact: manual or auto, and the instructions given to /compact
	// (always present, empty for auto).
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	// PostCompact: the summary that replaced the older turns.
	CompactSummary string `json:"compact_summary,omitempty"`

	// CwdChanged: the agent's working directory before and after.
	OldCwd string `json:"old_cwd,omitempty"`
	NewCwd string `json:"new_cwd,omitempty"`

	// InstructionsLoaded: the memory file, whose it is (User, Project)
	// and why it was read (session_start).
	FilePath   string `json:"file_path,omitempty"`
	MemoryType string `json:"memory_type,omitempty"`
	LoadReason string `json:"load_reason,omitempty"`

	// UserPromptExpansion: how the prompt expands (slash_command), the
	// command's name, its arguments and where it was read from; Prompt is
	// the prompt as typed ("/name args").
	ExpansionType string  `json:"expansion_type,omitempty"`
	CommandName   string  `json:"command_name,omitempty"`
	CommandArgs   *string `json:"command_args,omitempty"`
	CommandSource string  `json:"command_source,omitempty"`

	// PreModelSwitch, PostModelSwitch (Source says who switched: sdk,
	// command, picker).
	FromModel string `json:"from_model,omitempty"`
	ToModel   string `json:"to_model,omitempty"`
	// RequestedModel is what was asked for, a JSON string or null (the
	// session's first model).
	RequestedModel         json.RawMessage `json:"requested_model,omitempty"`
	ContextTokens          *int64          `json:"context_tokens,omitempty"`
	PromptCacheWarm        *bool           `json:"prompt_cache_warm,omitempty"`
	CacheTTL               string          `json:"cache_ttl,omitempty"`
	EstimatedCacheWriteUSD *float64        `json:"estimated_cache_write_usd,omitempty"`
	Pricing                string          `json:"pricing,omitempty"`
}

// ModelSwitch is what PreModelSwitch and PostModelSwitch hooks learn
// about a switch of the agent's model: Claude Code's fields, estimated as
// it estimates them.
type ModelSwitch struct {
	// From and To are the model ids before and after; Requested is what
	// was asked for ("" for the session's first model, sent as null).
	From, To, Requested string
	// Source says who switched (SwitchSDK).
	Source string
	// ContextTokens are the tokens the next request re-sends: the last
	// response's input, cache and output tokens (0 before the first).
	ContextTokens int64
	// CacheWarm says the prompt cache is likely still warm (the last
	// response came less than CacheTTL ago), so a switch forfeits it.
	CacheWarm bool
	CacheTTL  string
	// EstimatedUSD is the cost of writing ContextTokens to To's cache;
	// Pricing says where its price came from (configured, catalog,
	// default).
	EstimatedUSD float64
	Pricing      string
}

// The ModelSwitch sources: a switch asked for through the API (an SDK
// host's set_model), by a front end's /model command with a name, or in
// its model picker.
const (
	SwitchSDK     = "sdk"
	SwitchCommand = "command"
	SwitchPicker  = "picker"
)

// SwitchSources are the sources a caller may give.
var SwitchSources = []string{SwitchSDK, SwitchCommand, SwitchPicker}

// MemoryFile is a memory file for InstructionsLoaded: its path, whose it
// is (MemoryUser, MemoryProject) and why it was read (LoadSessionStart).
type MemoryFile struct {
	Path, Type, Reason string
}

// Claude Code's memory types and load reasons, for InstructionsLoaded.
const (
	MemoryUser       = "User"
	MemoryProject    = "Project"
	LoadSessionStart = "session_start"
	LoadCompact      = "compact"
)

// EffortLevel is the input's effort object: {"level": "high"}.
type EffortLevel struct {
	Level string `json:"level"`
}

// BatchCall is one call of a PostToolBatch: Claude Code's
// PostToolBatchToolCall.
type BatchCall struct {
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input"`
	ToolUseID    string          `json:"tool_use_id"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
}

// BackgroundTask is one piece of background work still running when an
// agent stops: Claude Code's BackgroundTaskSummary.
type BackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Description string `json:"description"`
	Command     string `json:"command,omitempty"`
	AgentType   string `json:"agent_type,omitempty"`
}

// StopState is what Stop and SubagentStop hooks learn about the agent
// that is about to stop.
type StopState struct {
	// Active is set when the agent is already continuing because a Stop
	// hook blocked it.
	Active bool
	// LastMessage is the text of the agent's last message.
	LastMessage string
	// Background is its background work still running.
	Background []BackgroundTask
}

// Failure is what StopFailure hooks learn about the API error that ended
// a turn.
type Failure struct {
	// Kind is Claude Code's name for the error (ErrorKind).
	Kind string
	// Details is the error's text; LastMessage the agent's last text.
	Details, LastMessage string
}

// Task describes a finished task for TaskCompleted.
type Task struct {
	ID string
	// Status is completed, failed or killed (background tasks) or
	// completed (shared task list).
	Status  string
	Summary string
	// Subject and Description are set for shared task-list tasks.
	Subject, Description string
	// TeammateName and TeamName are set when a teammate completed it.
	TeammateName, TeamName string
}
