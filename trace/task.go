package trace

import (
	"github.com/cohort-dev/cohort/task"
)

// taskRef is what the writer knows about a running task.
type taskRef struct {
	id    string
	call  string // the tool_use_id that started it
	track *track // the agent it runs (agent tasks; nil while pending) or that started it
	agent bool
	span  *span // a background shell's span on its owner's lane
}

// pendingTask is an agent task whose agent has sent no engine event yet.
// Its track is made (or, for an agent resumed under a new task, found) by
// the first engine event that names its call; a task that ends first (a
// remote agent, a failed start) gets its track then.
type pendingTask struct {
	ref   *taskRef
	name  string
	order int   // its place in the sort order, taken at task_started
	start int64 // the task_started stamp, where the agent span begins
	mark  int64 // the stamp after it, for the task_started instant
	args  map[string]any
}

// taskEvent turns one task event, stamped s, into spans and instants.
func (w *Writer) taskEvent(ev task.Event, s int64) {
	switch ev.Subtype {
	case task.SubtypeTaskStarted:
		w.taskStarted(ev, s)
	case task.SubtypeTaskNotification:
		w.taskEnded(ev, s)
	case task.SubtypeTaskProgress:
		if ref := w.tasks[ev.TaskID]; ref != nil && ref.agent && ref.track != nil && ref.track.open {
			ref.track.last = s // a remote agent's only sign of life
		}
	}
}

// taskStarted starts an agent task's agent span (on the track of its
// agent if that has sent events already, else pending until it does), or
// a background shell's span on a lane of the agent whose tool call
// started it.
func (w *Writer) taskStarted(ev task.Event, s int64) {
	if ev.TaskID == "" || w.tasks[ev.TaskID] != nil {
		return
	}
	ref := &taskRef{id: ev.TaskID, call: ev.ToolUseID, agent: task.Kind(ev.TaskType).IsAgent()}
	w.tasks[ev.TaskID] = ref
	args := startedArgs(ev)
	if !ref.agent {
		t := w.owner(ev.ToolUseID)
		ref.track = t
		ref.span = &span{name: fit(taskLabel(ev), nameCap), cat: "task", start: s, lane: w.takeLane(t),
			args: map[string]any{"task_id": ev.TaskID, "task_type": ev.TaskType}}
		w.instant(t.tid, "task", "task_started", w.next(), args)
		t.last = max(t.last, w.last)
		return
	}
	p := &pendingTask{ref: ref, name: agentName(ev), order: w.takeOrder(), start: s, mark: w.next(), args: args}
	switch t := w.byCall[ev.ToolUseID]; {
	case ev.ToolUseID == "":
		w.attach(w.newTrack(p.name, p.order), p)
	case t != nil:
		w.attach(t, p)
	default:
		w.pending[ev.ToolUseID] = p
	}
}

// attach puts a pending agent task on track t: names it, opens its agent
// span at the task's start and marks the start.
func (w *Writer) attach(t *track, p *pendingTask) {
	if w.pending[p.ref.call] == p {
		delete(w.pending, p.ref.call)
	}
	if c := p.ref.call; c != "" && w.byCall[c] == nil {
		w.byCall[c] = t
	}
	w.rename(t, p.name)
	t.task, p.ref.track = p.ref, t
	if !t.open {
		t.open, t.spanStart = true, p.start
	}
	w.instant(t.tid, "task", "task_started", p.mark, p.args)
	t.last = max(t.last, p.mark)
}

// taskEnded ends what taskStarted opened.
func (w *Writer) taskEnded(ev task.Event, s int64) {
	ref := w.tasks[ev.TaskID]
	args := endedArgs(ev)
	if ref == nil {
		// The start was missed (the writer came later): mark the end on
		// the agent it belongs to, if known.
		t := w.byCall[ev.ToolUseID]
		if t == nil || ev.ToolUseID == "" {
			t = w.owner(ev.ToolUseID)
		}
		w.instant(t.tid, "task", "task_notification", s, args)
		return
	}
	delete(w.tasks, ev.TaskID)
	if !ref.agent {
		ref.span.args["status"] = ev.Status
		w.endSpan(ref.span, s, false)
		w.instant(ref.track.tid, "task", "task_notification", w.next(), args)
		return
	}
	if p := w.pending[ref.call]; p != nil && p.ref == ref {
		w.attach(w.newTrack(p.name, p.order), p)
	}
	t := ref.track
	w.instant(t.tid, "task", "task_notification", s, args)
	extra := map[string]any{"status": ev.Status}
	if ev.Usage != nil {
		extra["usage"] = ev.Usage
	}
	w.endAgent(t, w.next(), extra, false)
	if t.task == ref {
		t.task = nil
	}
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
		return fit(kind+" "+ev.TaskID, nameCap)
	case kind == "":
		return fit(ev.Description, nameCap)
	}
	return fit(kind+": "+ev.Description, nameCap)
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
		args["description"] = fit(ev.Description, argCap)
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
		args["summary"] = fit(ev.Summary, argCap)
	}
	if ev.Usage != nil {
		args["usage"] = ev.Usage
	}
	return args
}
