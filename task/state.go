package task

import (
	"context"
	"time"
)

// Spec describes a task to Start. Description is required; the rest is
// optional and depends on the kind.
type Spec struct {
	// ID, when set, is the task's id (an agent uses its agent id, so the
	// model sees one id for the agent and its task); empty draws a fresh
	// one. It must be unused in the session.
	ID          string
	Kind        Kind
	Description string // 3–5 words from the Agent call, or the shell command's description
	Prompt      string // the agent's prompt (agent kinds)
	Command     string // the shell command (local_bash)
	// SubagentType is the agent definition's name ("general-purpose").
	SubagentType string

	// AgentID is the id of the agent the task runs; Name, when set, makes the
	// task addressable by agent name (TaskStop, SendMessage). A name is
	// unique among running tasks.
	AgentID string
	Name    string

	// ToolUseID is the id of the tool_use block that started the task.
	ToolUseID string
	// ParentID is the task id of the agent that spawned this task, empty for
	// the lead. When only ParentAgentID is known, Start resolves ParentID
	// from the running task with that agent id. Stopping a task stops its
	// children.
	ParentID      string
	ParentAgentID string

	// Queue receives the task's notification when it ends in the
	// background: the parent agent's queue. Nil means nobody is told.
	Queue *Queue

	// Background registers the task in the background (async agents,
	// background shells). A foreground task's caller waits with Task.Await;
	// it can be moved to the background later with Registry.Background.
	Background bool
	// Linked ties the task to the ctx passed to Start: when that ctx ends,
	// the task is killed — until the task is moved to the background, which
	// unlinks it. Synchronous children are linked; background agents are
	// independent of the turn that spawned them (Linked has no effect with
	// Background). Context values are inherited either way.
	Linked bool
	// AutoBackground moves a foreground task to the background after this
	// long (zero: never).
	AutoBackground time.Duration
	// Retain marks the task as shown in a panel from the start.
	Retain bool
	// Detail is the task's kind-specific detail from the start (see
	// Task.SetDetail), so that it is there when task_started is seen.
	Detail any
	// Transcript, when set, is the path of a file that already holds the
	// task's transcript (an agent's sidechain file, written as the agent
	// runs). The output file is then a hard link to it — one file, written
	// once — rather than a copy; see Output. When no link can be made
	// (another file system), the task gets a file of its own as usual.
	Transcript string
	// Registered, when set, is called once the task is registered, before
	// task_started is emitted and before run starts: the caller publishes
	// the task where others look for it (an agent's record) with no moment
	// in which the run is visible but its task is not.
	Registered func(*Task)
}

// RunFunc is a task's body. It runs in a goroutine the registry owns; ctx
// ends when the task is stopped (Stop, Kill, a linked caller's ctx, Close).
// It reports progress through t and returns the final outcome. A non-nil
// error marks the task failed unless it was stopped, which marks it killed
// whatever run returns. A panic is recovered and fails the task.
type RunFunc func(ctx context.Context, t *Task) (Outcome, error)

// Outcome is what a task's body returns.
type Outcome struct {
	Text string // final text: the agent's last message, a shell's summary
	// TotalTokens and ToolUses override the progress tracker's totals when
	// non-zero.
	TotalTokens int64
	ToolUses    int
	// ExitCode is a background shell's exit status. A non-zero code fails a
	// local_bash task.
	ExitCode *int
	// WorktreePath and WorktreeBranch name a kept worktree.
	WorktreePath   string
	WorktreeBranch string
	// Summary, when set, replaces the summary of a completed task's
	// notification ("Improved 3 memories" for a dream); a failed or killed
	// task keeps the usual one.
	Summary string
}

// Result is a finished task's outcome as recorded in its state.
type Result struct {
	Text           string
	TotalTokens    int64
	ToolUses       int
	Duration       time.Duration
	ExitCode       *int
	WorktreePath   string
	WorktreeBranch string
}

// Activity is one tool call seen by the progress tracker.
type Activity struct {
	Tool        string
	Description string
	Time        time.Time
}

// Progress is a snapshot of a task's progress tracker.
type Progress struct {
	// LatestInputTokens is the input size (cached or not) of the most recent
	// request: the context the agent holds now.
	LatestInputTokens int64
	// OutputTokens is the sum of output tokens over all requests.
	OutputTokens int64
	ToolUses     int
	// Activities are the last (at most 5) tool calls, oldest first.
	Activities   []Activity
	LastActivity time.Time
}

// TotalTokens is the token count shown for a running agent: the current
// context plus everything it has written.
func (p Progress) TotalTokens() int64 { return p.LatestInputTokens + p.OutputTokens }

// State is a copy of a task's record. Holding one never races with the task.
type State struct {
	ID           string
	Kind         Kind
	AgentID      string
	Name         string
	Description  string
	Prompt       string
	Command      string
	SubagentType string
	ToolUseID    string
	ParentID     string

	Status         Status
	IsBackgrounded bool
	// MovedByUser is set when the user moved the task to the background
	// (Registry.Background), not its spec's timer.
	MovedByUser bool
	Progress    Progress
	Result      *Result // set once terminal
	Err         string  // why a task failed or was killed
	OutputErr   string  // why the transcript could not be saved in full
	StartTime   time.Time
	EndTime     time.Time // zero while running
	Notified    bool
	Retain      bool
	EvictAfter  time.Time // zero until the eviction clock starts
	OutputFile  string

	// Phase is a kind-specific stage (dream: "starting", "updating").
	Phase string
	// Detail holds kind-specific fields the registry does not interpret
	// (dream: sessions reviewed, files touched; remote: job and worker).
	Detail any
}
