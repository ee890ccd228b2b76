package tui

import (
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// taskRow is one task of the session as its task events told it: agents
// of every kind, background Bash commands, workflow runs, remote jobs.
type taskRow struct {
	id, kind, description, status string
	background                    bool
}

// taskLog keeps every task the session has reported, in the order they
// started, until /clear: the tree lists only agents, and an agent's
// record leaves the session's list when it leaves memory.
type taskLog struct {
	order []string
	byID  map[string]*taskRow
}

// note takes in one task event.
func (l *taskLog) note(ev cohort.Event) {
	if ev.TaskID == "" {
		return
	}
	if l.byID == nil {
		l.byID = map[string]*taskRow{}
	}
	r := l.byID[ev.TaskID]
	if r == nil {
		r = &taskRow{id: ev.TaskID, status: cohort.AgentRunning}
		l.byID[ev.TaskID] = r
		l.order = append(l.order, ev.TaskID)
	}
	if ev.TaskType != "" {
		r.kind = ev.TaskType
	}
	if ev.Description != "" {
		r.description = ev.Description
	}
	if ev.IsBackgrounded != nil {
		r.background = *ev.IsBackgrounded
	}
	if ev.Subtype == cohort.SubtypeTaskNotification && ev.Status != "" {
		r.status = ev.Status
	}
}

// final is the state a finished task ended in, as an agent state ("" if
// it has not reported its end).
func (l *taskLog) final(id string) string {
	r := l.byID[id]
	if r == nil || r.status == cohort.AgentRunning {
		return ""
	}
	if r.status == "stopped" {
		return cohort.AgentKilled
	}
	return r.status
}

func (l *taskLog) forget() { *l = taskLog{} }

// agentRow stands for a finished agent task the tree never saw (it left
// memory between two snapshots): what its events said, its spend unknown
// here (the session's retired entry holds it).
func (r *taskRow) agentRow(final string) cohort.AgentInfo {
	kind := "subagent"
	if r.background {
		kind = "background"
	}
	return cohort.AgentInfo{ID: r.id, TaskID: r.id, Kind: kind, Description: r.description, State: final, Depth: 1}
}

// listTasks is /tasks: every task of the session, agents with what the
// tree knows of them, the others (background Bash, remote jobs) with
// what their events said.
func listTasks(rows []cohort.AgentInfo, log *taskLog) string {
	var b strings.Builder
	b.WriteString("Tasks:")
	listed := map[string]bool{}
	line := func(id, kind, state, label string) {
		fmt.Fprintf(&b, "\n  %-17s  %-10s %-9s %s", Clean(id, false), Clean(kind, false), Clean(state, false), Clean(clip.Runes(label, 60), false))
	}
	for _, a := range rows {
		if a.TaskID != "" {
			listed[a.TaskID] = true
			line(a.TaskID, a.Kind, a.State, agentLabel(a))
		}
	}
	for _, id := range log.order {
		if r := log.byID[id]; !listed[id] {
			line(r.id, r.kind, r.status, r.description)
		}
	}
	if len(listed) == 0 && len(log.order) == 0 {
		b.WriteString("\n  none yet")
	}
	return b.String()
}
