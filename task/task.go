package task

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrBackgrounded is returned by Task.Await when the task moved to the
// background: the caller should report async_launched and let the
// notification deliver the result.
var ErrBackgrounded = errors.New("task moved to the background")

// Task is the handle of one registered task. The registry owns it; the run
// function and the spawning tool use it to report progress, write the
// transcript and wait. Safe for concurrent use.
type Task struct {
	r        *Registry
	spec     Spec // immutable copy
	id       string
	parentID string
	start    time.Time
	out      *Output
	cancel   context.CancelFunc
	done     chan struct{} // closed after the task is terminal and notified
	bg       chan struct{} // closed when the task moves to the background
	notified atomic.Bool
	// notifyMu makes the notified flag's set and what goes with it (the
	// queue entry, or its withdrawal by Consume) one step.
	notifyMu   sync.Mutex
	outputName string // file name inside the registry's tasks dir

	mu           sync.Mutex
	status       Status
	backgrounded bool
	movedByUser  bool // backgrounded through Registry.Background
	// settled is set once finish has delivered (or deliberately skipped)
	// the notification: until then a background task still counts as
	// outstanding, so a waiter cannot see it ended but miss its message.
	settled       bool
	stopRequested bool
	stopReason    string
	unlink        func() bool // detaches a linked task from its caller's ctx
	autoBgStop    func() bool
	result        *Result
	errText       string
	outputErr     string
	end           time.Time
	retain        bool
	notifiedAt    time.Time
	evictAfter    time.Time
	evictStop     func() bool
	phase         string
	detail        any

	pmu  sync.Mutex
	prog tracker

	emitMu    sync.Mutex // orders this task's events
	lastEmit  time.Time
	trailStop func() bool
	final     bool
}

// ID returns the task id.
func (t *Task) ID() string { return t.id }

// Kind returns the task's kind.
func (t *Task) Kind() Kind { return t.spec.Kind }

// Output returns the task's transcript writer. After the run function
// returns, the file is closed; the in-memory tail stays readable.
func (t *Task) Output() *Output { return t.out }

// Done returns a channel closed once the task is terminal and its
// notification (if any) is enqueued.
func (t *Task) Done() <-chan struct{} { return t.done }

// Backgrounded returns a channel closed when the task moves to the
// background.
func (t *Task) Backgrounded() <-chan struct{} { return t.bg }

// SetPhase records a kind-specific stage name (dream: "starting",
// "updating").
func (t *Task) SetPhase(phase string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.phase = phase
}

// SetDetail records kind-specific data. d is shared by every State taken
// afterwards, so treat it as immutable: set a new value to change it.
func (t *Task) SetDetail(d any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.detail = d
}

// Await blocks until the task ends or moves to the background, or ctx
// ends. It is how a synchronous Agent call waits for its child: nil means
// the task is terminal and State holds the result; ErrBackgrounded means
// it keeps running and will notify its queue later; otherwise ctx's error.
// A move to the background wins over a completion that follows it, so the
// result is delivered exactly once: either here or by the notification.
func (t *Task) Await(ctx context.Context) (State, error) {
	for {
		t.mu.Lock()
		bg, st := t.backgrounded, t.status
		t.mu.Unlock()
		switch {
		case bg:
			return t.State(), ErrBackgrounded
		case st.Terminal():
			return t.State(), nil
		}
		select {
		case <-t.done:
		case <-t.bg:
		case <-ctx.Done():
			return t.State(), ctx.Err()
		}
	}
}

// State returns a copy of the task's record.
func (t *Task) State() State {
	p := t.progress()
	t.mu.Lock()
	defer t.mu.Unlock()
	s := State{
		ID:             t.id,
		Kind:           t.spec.Kind,
		AgentID:        t.spec.AgentID,
		Name:           t.spec.Name,
		Description:    t.spec.Description,
		Prompt:         t.spec.Prompt,
		Command:        t.spec.Command,
		SubagentType:   t.spec.SubagentType,
		ToolUseID:      t.spec.ToolUseID,
		ParentID:       t.parentID,
		Status:         t.status,
		IsBackgrounded: t.backgrounded,
		MovedByUser:    t.movedByUser,
		Progress:       p,
		Err:            t.errText,
		OutputErr:      t.outputErr,
		StartTime:      t.start,
		EndTime:        t.end,
		Notified:       t.notified.Load(),
		Retain:         t.retain,
		EvictAfter:     t.evictAfter,
		OutputFile:     t.out.Path(),
		Phase:          t.phase,
		Detail:         t.detail,
	}
	if t.result != nil {
		r := *t.result
		s.Result = &r
	}
	return s
}

// signal asks a running task to stop: it records why and cancels its
// context. It reports false when the task is already terminal.
func (t *Task) signal(reason string) bool {
	t.mu.Lock()
	if t.status.Terminal() {
		t.mu.Unlock()
		return false
	}
	if !t.stopRequested {
		t.stopRequested, t.stopReason = true, reason
	}
	t.mu.Unlock()
	t.cancel()
	return true
}

// callerGone stops a linked task whose caller's ctx ended, unless the
// task has moved to the background. The check is under the lock that
// background takes, because the link is detached only after Await has
// already seen the move: the Agent call returns, its turn's ctx is
// cancelled, and this can run before background gets to stop it.
func (t *Task) callerGone() {
	t.mu.Lock()
	if t.backgrounded || t.status.Terminal() {
		t.mu.Unlock()
		return
	}
	if !t.stopRequested {
		t.stopRequested, t.stopReason = true, "the turn that started it was cancelled"
	}
	t.mu.Unlock()
	t.cancel()
}

// stopping reports whether the task was asked to stop (killed tasks
// included).
func (t *Task) stopping() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopRequested
}

func (t *Task) running() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.status.Terminal()
}
