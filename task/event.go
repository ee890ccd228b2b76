package task

// Event subtypes, as Claude Code's stream-json names them.
const (
	SubtypeTaskStarted      = "task_started"
	SubtypeTaskProgress     = "task_progress"
	SubtypeTaskNotification = "task_notification"
)

// ReasonUnfinishedAtResume is a task_notification's reason when a resumed
// session closed a task of an earlier process that never reported its end
// (NotifyKilled), as Claude Code names it.
const ReasonUnfinishedAtResume = "unfinished_at_resume"

// Event is one stream-json system message about a task, shaped like Claude
// Code's `--output-format stream-json` output
// ({"type":"system","subtype":"task_started",…}); the CLI prints it as one
// JSON line. Which optional fields are set depends on Subtype:
//
//   - task_started: task_id, tool_use_id, description, task_type, prompt,
//     subagent_type, is_backgrounded, parent_task_id
//   - task_progress: task_id, tool_use_id, description, usage,
//     last_tool_name
//   - task_notification: task_id, tool_use_id, status
//     (completed|failed|stopped — a killed task is "stopped" here),
//     output_file, summary, usage (agent tasks); reason
//     (ReasonUnfinishedAtResume) and task_type (local_agent or
//     local_workflow only) when a resumed session closed the task
//   - task_updated: task_id, patch (status, end_time and error at the
//     end, just before task_notification; is_backgrounded when a
//     foreground task moves to the background)
//   - background_tasks_changed: tasks, every running background task,
//     sent when one starts in or moves to the background and after one
//     that ends there has sent its task_notification
type Event struct {
	Type           string `json:"type"`
	Subtype        string `json:"subtype"`
	TaskID         string `json:"task_id,omitempty"`
	ToolUseID      string `json:"tool_use_id,omitempty"`
	Description    string `json:"description,omitempty"`
	TaskType       string `json:"task_type,omitempty"`
	Prompt         string `json:"prompt,omitempty"`
	SubagentType   string `json:"subagent_type,omitempty"`
	IsBackgrounded *bool  `json:"is_backgrounded,omitempty"`
	ParentTaskID   string `json:"parent_task_id,omitempty"`
	Status         string `json:"status,omitempty"`
	OutputFile     string `json:"output_file,omitempty"`
	Summary        string `json:"summary,omitempty"`
	Usage          *Usage `json:"usage,omitempty"`
	LastToolName   string `json:"last_tool_name,omitempty"`
	Reason         string `json:"reason,omitempty"`
	// Patch is a task_updated event's change; Tasks a
	// background_tasks_changed event's set (level.go).
	Patch     *Patch     `json:"patch,omitempty"`
	Tasks     []LiveTask `json:"tasks,omitempty"`
	UUID      string     `json:"uuid"`
	SessionID string     `json:"session_id"`
}
