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
}

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
