package trace

import (
	"github.com/cohort-dev/cohort/task"
)

// taskRef is what the writer knows about a running task.
type taskRef struct {
	id    string
	track *track // the agent the task runs (agent tasks) or started it (others)
	agent bool
	span  *span // a background shell's span on its owner's lane
}

// taskEvent turns one task event, stamped s, into spans and instants.
func (w *Writer) taskEvent(ev task.Event, s int64) {
	switch ev.Subtype {
	case task.SubtypeTaskStarted:
		w.taskStarted(ev, s)
	case task.SubtypeTaskNotification:
		w.taskEnded(ev, s)
	case task.SubtypeTaskProgress:
		if ref := w.tasks[ev.TaskID]; ref != nil && ref.agent && ref.track.open {
			ref.track.last = s // a remote agent's only sign of life
		}
	}
}

// taskStarted opens an agent task's agent span on the track its engine
// events will bind to, or a background shell's span on a lane of the agent
// whose tool call started it.
func (w *Writer) taskStarted(ev task.Event, s int64) {
	if ev.TaskID == "" || w.tasks[ev.TaskID] != nil {
		return
	}
	ref := &taskRef{id: ev.TaskID, agent: task.Kind(ev.TaskType).IsAgent()}
	args := startedArgs(ev)
	if ref.agent {
		t := w.byCall[ev.ToolUseID]
		if t == nil || ev.ToolUseID == "" {
			t = w.newTrack(agentName(ev), false)
			if ev.ToolUseID != "" {
				w.byCall[ev.ToolUseID] = t
			}
		} else {
			w.rename(t, agentName(ev))
		}
		ref.track, t.task = t, ref
		s = w.begin(t, s)
		w.instant(t.tid, "task", "task_started", s, args)
		t.last = w.last
	} else {
		t := w.owner(ev.ToolUseID)
		ref.track = t
		ref.span = &span{name: clip(taskLabel(ev), nameCap), cat: "task", start: s, lane: w.takeLane(t),
			args: map[string]any{"task_id": ev.TaskID, "task_type": ev.TaskType}}
		w.instant(t.tid, "task", "task_started", w.next(), args)
		t.last = max(t.last, w.last)
	}
	w.tasks[ev.TaskID] = ref
}

// taskEnded ends what taskStarted opened.
func (w *Writer) taskEnded(ev task.Event, s int64) {
	ref := w.tasks[ev.TaskID]
	args := endedArgs(ev)
	if ref == nil {
		// The start was missed (the writer came later): mark the end on
		// the agent it belongs to, if known.
		t := w.byCall[ev.ToolUseID]
		if t == nil {
			t = w.owner(ev.ToolUseID)
		}
		w.instant(t.tid, "task", "task_notification", s, args)
		return
	}
	delete(w.tasks, ev.TaskID)
	t := ref.track
	if ref.agent {
		w.instant(t.tid, "task", "task_notification", s, args)
		extra := map[string]any{"status": ev.Status}
		if ev.Usage != nil {
			extra["usage"] = ev.Usage
		}
		w.endAgent(t, w.next(), extra, false)
		if t.task == ref {
			t.task = nil
		}
		return
	}
	ref.span.args["status"] = ev.Status
	w.endSpan(ref.span, s, false)
	w.instant(t.tid, "task", "task_notification", w.next(), args)
}

// owner returns the agent whose open tool call has id callID; the lead
// when none has.
func (w *Writer) owner(callID string) *track {
	if t := w.calls[callID]; t != nil && callID != "" {
		return t
	}
	return w.leadTrack()
}

// agentName names an agent task's track: its type and description.
func agentName(ev task.Event) string {
	kind := ev.SubagentType
	if kind == "" {
		kind = ev.TaskType
	}
	switch {
	case ev.Description == "":
		return clip(kind+" "+ev.TaskID, nameCap)
	case kind == "":
		return clip(ev.Description, nameCap)
	}
	return clip(kind+": "+ev.Description, nameCap)
}

func taskLabel(ev task.Event) string {
	if ev.Description != "" {
		return ev.Description
	}
	return ev.TaskType + " " + ev.TaskID
}

func startedArgs(ev task.Event) map[string]any {
	args := map[string]any{"task_id": ev.TaskID, "task_type": ev.TaskType}
	if ev.ToolUseID != "" {
		args["tool_use_id"] = ev.ToolUseID
	}
	if ev.Description != "" {
		args["description"] = clip(ev.Description, argCap)
	}
	if ev.SubagentType != "" {
		args["subagent_type"] = ev.SubagentType
	}
	if ev.IsBackgrounded != nil {
		args["background"] = *ev.IsBackgrounded
	}
	if ev.ParentTaskID != "" {
		args["parent_task_id"] = ev.ParentTaskID
	}
	return args
}

func endedArgs(ev task.Event) map[string]any {
	args := map[string]any{"task_id": ev.TaskID, "status": ev.Status}
	if ev.Summary != "" {
		args["summary"] = clip(ev.Summary, argCap)
	}
	if ev.Usage != nil {
		args["usage"] = ev.Usage
	}
	return args
}
