package task

import (
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// activityRing is how many recent tool calls a tracker keeps.
const activityRing = 5

// tracker is a task's progress: Claude Code's ProgressTracker.
type tracker struct {
	latestInput int64
	output      int64
	toolUses    int
	ring        [activityRing]Activity
	n, next     int
	last        time.Time
	lastTool    string
}

func (tr *tracker) snapshot() Progress {
	p := Progress{
		LatestInputTokens: tr.latestInput,
		OutputTokens:      tr.output,
		ToolUses:          tr.toolUses,
		LastActivity:      tr.last,
	}
	if tr.n > 0 {
		p.Activities = make([]Activity, 0, tr.n)
		for i := range tr.n {
			p.Activities = append(p.Activities, tr.ring[(tr.next-tr.n+i+activityRing)%activityRing])
		}
	}
	return p
}

func (t *Task) progress() Progress {
	t.pmu.Lock()
	defer t.pmu.Unlock()
	return t.prog.snapshot()
}

// RecordUsage folds one model response's usage into the tracker: the
// input (cached or not) replaces the latest input size, the output adds up.
func (t *Task) RecordUsage(u llm.Usage) {
	t.pmu.Lock()
	t.prog.latestInput = u.TotalInput()
	t.prog.output += u.OutputTokens
	t.pmu.Unlock()
	t.progressChanged()
}

// RecordToolUse counts one tool call and remembers it as an activity
// (tool name and a short description, e.g. the file or command).
func (t *Task) RecordToolUse(tool, description string) {
	now := t.r.clock.Now()
	t.pmu.Lock()
	tr := &t.prog
	tr.toolUses++
	tr.ring[tr.next] = Activity{Tool: tool, Description: description, Time: now}
	tr.next = (tr.next + 1) % activityRing
	tr.n = min(tr.n+1, activityRing)
	tr.last, tr.lastTool = now, tool
	t.pmu.Unlock()
	t.progressChanged()
}

// progressChanged emits a task_progress event, coalesced per task: the
// first change is emitted at once, later ones at most once per
// ProgressInterval, and a trailing event carries the latest state when
// changes stop inside an interval. Nothing is emitted after the task's
// notification event.
func (t *Task) progressChanged() {
	if t.r.cfg.OnEvent == nil {
		return
	}
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	if t.final || t.trailStop != nil {
		return // a trailing event is armed and will carry this change
	}
	now := t.r.clock.Now()
	iv := t.r.cfg.ProgressInterval
	since := now.Sub(t.lastEmit)
	if t.lastEmit.IsZero() || iv <= 0 || since >= iv {
		t.emitProgressLocked(now)
		return
	}
	t.trailStop = t.r.clock.AfterFunc(iv-since, t.flushProgress)
}

func (t *Task) flushProgress() {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.trailStop = nil
	if t.final {
		return
	}
	t.emitProgressLocked(t.r.clock.Now())
}

func (t *Task) emitProgressLocked(now time.Time) {
	t.lastEmit = now
	t.pmu.Lock()
	total, uses, tool := t.prog.latestInput+t.prog.output, t.prog.toolUses, t.prog.lastTool
	t.pmu.Unlock()
	t.r.emit(Event{
		Subtype:      SubtypeTaskProgress,
		TaskID:       t.id,
		ToolUseID:    t.spec.ToolUseID,
		Description:  t.spec.Description,
		Usage:        &Usage{TotalTokens: total, ToolUses: uses, DurationMs: now.Sub(t.start).Milliseconds()},
		LastToolName: tool,
	})
}

// emitFinal emits the task's last event and silences progress.
func (t *Task) emitFinal(ev Event) {
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	t.final = true
	if t.trailStop != nil {
		t.trailStop()
		t.trailStop = nil
	}
	t.r.emit(ev)
}
