package task

import "slices"

// Event subtypes that report a task's changes and the set of background
// tasks, as Claude Code's stream-json names them.
const (
	SubtypeTaskUpdated            = "task_updated"
	SubtypeBackgroundTasksChanged = "background_tasks_changed"
)

// Patch is what a task_updated event says changed: its status at an end,
// with the end time (Unix milliseconds) and the error of a failure, or
// that it moved to the background.
type Patch struct {
	Status         string `json:"status,omitempty"`
	EndTime        int64  `json:"end_time,omitempty"`
	Error          string `json:"error,omitempty"`
	IsBackgrounded *bool  `json:"is_backgrounded,omitempty"`
}

// LiveTask is one entry of a background_tasks_changed event.
type LiveTask struct {
	TaskID       string `json:"task_id"`
	TaskType     string `json:"task_type"`
	SubagentType string `json:"subagent_type,omitempty"`
	Description  string `json:"description"`
	ParentTaskID string `json:"parent_task_id,omitempty"`
}

// emitUpdated sends task_updated with patch, in order with the task's
// other events.
func (t *Task) emitUpdated(p Patch) {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.r.emit(Event{Subtype: SubtypeTaskUpdated, TaskID: t.id, Patch: &p})
}

// levelAdd puts t in the set of background tasks and sends the set.
func (r *Registry) levelAdd(t *Task) {
	r.levelMu.Lock()
	defer r.levelMu.Unlock()
	r.live = append(r.live, LiveTask{TaskID: t.id, TaskType: string(t.spec.Kind), SubagentType: t.spec.SubagentType,
		Description: t.spec.Description, ParentTaskID: t.parentID})
	r.emitLevelLocked()
}

// levelRemove takes t out of the set of background tasks and sends the
// set.
func (r *Registry) levelRemove(t *Task) {
	r.levelMu.Lock()
	defer r.levelMu.Unlock()
	r.live = slices.DeleteFunc(r.live, func(l LiveTask) bool { return l.TaskID == t.id })
	r.emitLevelLocked()
}

// emitLevelLocked sends background_tasks_changed with the set now. It is
// read and sent under levelMu, so the events arrive in the order the sets
// changed and the last one is current.
func (r *Registry) emitLevelLocked() {
	if r.cfg.OnEvent == nil {
		return
	}
	r.emit(Event{Subtype: SubtypeBackgroundTasksChanged, Tasks: slices.Clone(r.live)})
}
