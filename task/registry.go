package task

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/internal/lease"
)

// Registry defaults.
const (
	DefaultProgressInterval = time.Second
	DefaultStopTimeout      = 10 * time.Second
	DefaultEvictGrace       = 3 * time.Second
	DefaultRetainGrace      = 30 * time.Second
)

// Errors callers branch on.
var (
	ErrNotFound       = errors.New("no such task")
	ErrNotRunning     = errors.New("task is not running")
	ErrClosed         = errors.New("task registry is closed")
	ErrNameTaken      = errors.New("a running task already has this name")
	ErrParentStopping = errors.New("the parent task is stopping")
	ErrStopTimeout    = errors.New("task did not stop in time")
)

var sessionIDPattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Config configures a Registry. Home and SessionID are required.
type Config struct {
	Home      string // COHORT_HOME
	SessionID string // output files go to Home/tmp/SessionID/tasks
	Clock     Clock  // default: the real clock
	// Rand is the source of task ids and event uuids (default
	// crypto/rand). Reads are serialised by the registry.
	Rand io.Reader
	// OnEvent receives task_started, task_progress and task_notification
	// events. It may be called from many goroutines at once, must return
	// quickly, and must not call the same task's Record methods. Events of
	// one task arrive in order: started, progress…, notification.
	OnEvent func(Event)
	Output  OutputConfig
	// ProgressInterval is the least time between two task_progress events
	// of one task (default 1 s; negative: no coalescing).
	ProgressInterval time.Duration
	// StopTimeout bounds how long Stop waits for a task's run to return
	// (default 10 s).
	StopTimeout time.Duration
	// EvictGrace and RetainGrace are how long a notified task stays listed
	// (defaults 3 s, and 30 s while Retain is set).
	EvictGrace  time.Duration
	RetainGrace time.Duration
	// PendingRetention is how long the output file of a task whose
	// notification was never delivered is kept after its session ended,
	// for a resume (default DefaultPendingRetention).
	PendingRetention time.Duration
	// Logf, when set, hears of temporary files that could not be cleaned.
	Logf func(format string, args ...any)
}

// Registry holds one session's tasks. Safe for concurrent use; Close ends
// it.
type Registry struct {
	cfg    Config
	clock  Clock
	dir    string
	root   *os.Root
	randMu sync.Mutex
	// levelMu guards live, the running background tasks in the order they
	// joined, and orders background_tasks_changed events (level.go).
	levelMu sync.Mutex
	live    []LiveTask
	// lease is this process's shared hold on the session directory.
	lease *lease.Lease

	closeOnce sync.Once
	rootErr   error

	mu      sync.Mutex
	closed  bool
	tasks   map[string]*Task
	byName  map[string]*Task
	byAgent map[string]*Task
	kids    map[string][]string // parent id → child ids, kept while a child is listed
	ghosts  map[string]string   // evicted id → its parent id, while it has listed descendants
}

// NewRegistry prepares Home/tmp/SessionID/tasks (directories 0700, none of
// them a symbolic link), holding the session directory's lease until
// Close, and returns an empty registry. It first sweeps the directories of
// sessions no process uses any more (see the package doc).
func NewRegistry(cfg Config) (*Registry, error) {
	if cfg.Home == "" {
		return nil, errors.New("task registry: Config.Home (COHORT_HOME) is empty")
	}
	if !sessionIDPattern.MatchString(cfg.SessionID) {
		return nil, fmt.Errorf("task registry: session id %q is not usable in a path (want letters, digits, '.', '_', '-')", cfg.SessionID)
	}
	cfg.Clock = cmp.Or[Clock](cfg.Clock, realClock{})
	cfg.Rand = cmp.Or[io.Reader](cfg.Rand, rand.Reader)
	cfg.ProgressInterval = cmp.Or(cfg.ProgressInterval, DefaultProgressInterval)
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, DefaultStopTimeout)
	cfg.EvictGrace = cmp.Or(cfg.EvictGrace, DefaultEvictGrace)
	cfg.RetainGrace = cmp.Or(cfg.RetainGrace, DefaultRetainGrace)
	cfg.Output = cfg.Output.withDefaults()

	if err := sweepTmp(cfg.Home, cfg.SessionID, cfg.PendingRetention, cfg.Clock.Now()); err != nil && cfg.Logf != nil {
		cfg.Logf("task registry: sweeping the temporary files of ended sessions: %v", err)
	}
	dir, l, err := claimSessionDir(cfg.Home, cfg.SessionID)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		l.Release()
		return nil, fmt.Errorf("task registry: open %s: %w", dir, err)
	}
	return &Registry{
		cfg: cfg, clock: cfg.Clock, dir: dir, root: root, lease: l,
		tasks: map[string]*Task{}, byName: map[string]*Task{}, byAgent: map[string]*Task{},
		kids: map[string][]string{}, ghosts: map[string]string{},
	}, nil
}

// makeTaskDir creates Home/tmp/SessionID/tasks. Home may be a link (the
// user's choice); the directories below it must be real directories.
func makeTaskDir(home, session string) (string, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("task registry: create COHORT_HOME %s: %w", home, err)
	}
	dir := home
	for _, part := range []string{"tmp", session, "tasks"} {
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("task registry: create %s: %w", dir, err)
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", fmt.Errorf("task registry: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("task registry: %s is a symbolic link: %w (remove it if you did not put it there)", dir, ErrSymlink)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("task registry: %s is not a directory; move it aside", dir)
		}
	}
	return dir, nil
}

// Dir returns the directory holding the output files.
func (r *Registry) Dir() string { return r.dir }

// Start registers a task as running, creates its output file, emits
// task_started and runs run in a goroutine the registry owns. When run
// returns, the output is flushed, the task is marked terminal (completed,
// failed, or killed if it was stopped) and, if it is in the background by
// then, exactly one notification goes to spec.Queue. ctx supplies context
// values and, for a Linked spec, cancellation.
func (r *Registry) Start(ctx context.Context, spec Spec, run RunFunc) (*Task, error) {
	if err := checkSpec(&spec, run); err != nil {
		return nil, err
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if spec.Linked && !spec.Background && ctx.Err() != nil {
		return nil, fmt.Errorf("task start: %w", context.Cause(ctx))
	}
	t := &Task{
		r: r, spec: spec, parentID: spec.ParentID,
		done: make(chan struct{}), bg: make(chan struct{}),
		status: StatusRunning, backgrounded: spec.Background, retain: spec.Retain, detail: spec.Detail,
	}
	if err := r.createOutput(t); err != nil {
		return nil, err
	}
	if err := r.markPending(t); err != nil {
		r.discardOutput(t)
		return nil, fmt.Errorf("task start: record the task: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t.cancel = cancel
	if err := r.register(t); err != nil {
		cancel()
		r.discardOutput(t)
		_ = r.Release(t.id)
		return nil, err
	}
	if spec.Registered != nil {
		spec.Registered(t)
	}
	r.arm(ctx, t)
	r.emitStarted(t)
	if spec.Background {
		r.levelAdd(t)
	}
	go r.own(runCtx, t, run)
	return t, nil
}

func checkSpec(spec *Spec, run RunFunc) error {
	if run == nil {
		return errors.New("task start: run function is nil")
	}
	if !spec.Kind.Valid() {
		return fmt.Errorf("task start: unknown kind %q (want local_agent, local_bash, remote_agent, in_process_teammate, dream or local_workflow)", spec.Kind)
	}
	if strings.TrimSpace(spec.Description) == "" {
		spec.Description = spec.Command
	}
	if strings.TrimSpace(spec.Description) == "" {
		return errors.New("task start: description is empty")
	}
	if spec.ID != "" && !validID.MatchString(spec.ID) {
		return fmt.Errorf("task start: id %q must be 2-64 lower-case letters and digits, starting with a letter", spec.ID)
	}
	return nil
}

// validID is what a caller-chosen task id must look like: it names a file.
var validID = lazyre.New(`^[a-z][a-z0-9]{1,63}$`)

// createOutput picks a fresh id and creates its file. The file system is
// the authority on uniqueness: O_EXCL fails on any id used before, even by
// an earlier process of the same session, and a fresh id is drawn.
func (r *Registry) createOutput(t *Task) error {
	if id := t.spec.ID; id != "" {
		name := id + ".output"
		out, err := r.openOutput(t, name)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("task start: id %q is already used in %s", id, r.dir)
		}
		if err != nil {
			return err
		}
		t.id, t.out, t.outputName = id, out, name
		return nil
	}
	for range 8 {
		r.randMu.Lock()
		id, err := newID(r.cfg.Rand, t.spec.Kind)
		r.randMu.Unlock()
		if err != nil {
			return err
		}
		name := id + ".output"
		out, err := r.openOutput(t, name)
		if errors.Is(err, ErrSymlink) || (err != nil && !errors.Is(err, fs.ErrExist)) {
			return err
		}
		if err == nil {
			t.id, t.out, t.outputName = id, out, name
			return nil
		}
	}
	return fmt.Errorf("task start: could not find an unused task id in %s; is the random source broken?", r.dir)
}

// openOutput creates the output file name for t: a link to its transcript
// when it has one (linked.go), else a new file.
func (r *Registry) openOutput(t *Task, name string) (*Output, error) {
	if t.spec.Transcript != "" {
		if out, ok, err := linkOutputIn(r.root, r.dir, name, t.spec.Transcript, r.cfg.Output); ok {
			return out, err
		}
	}
	return createOutputIn(r.root, name, filepath.Join(r.dir, name), r.cfg.Output)
}

func (r *Registry) discardOutput(t *Task) {
	t.out.Close()
	r.root.Remove(t.outputName)
}

// register adds t to the indexes. Under r.mu, so that a Stop collecting a
// parent's subtree either sees the new child or makes its Start fail.
func (r *Registry) register(t *Task) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if n := t.spec.Name; n != "" {
		if o := r.byName[n]; o != nil && o.running() {
			return fmt.Errorf("task start: name %q: %w (task %s)", n, ErrNameTaken, o.id)
		}
	}
	if t.parentID == "" && t.spec.ParentAgentID != "" {
		if p := r.byAgent[t.spec.ParentAgentID]; p != nil {
			t.parentID = p.id
		}
	}
	if p := r.tasks[t.parentID]; p != nil && p.stopping() {
		return fmt.Errorf("task start: parent %s: %w", p.id, ErrParentStopping)
	}
	t.start = r.clock.Now()
	r.tasks[t.id] = t
	if t.spec.Name != "" {
		r.byName[t.spec.Name] = t
	}
	if t.spec.AgentID != "" {
		r.byAgent[t.spec.AgentID] = t
	}
	if t.parentID != "" {
		r.kids[t.parentID] = append(r.kids[t.parentID], t.id)
	}
	return nil
}

// arm links a foreground task to its caller's ctx and starts its
// auto-background timer.
func (r *Registry) arm(ctx context.Context, t *Task) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.backgrounded {
		return
	}
	if t.spec.Linked {
		t.unlink = context.AfterFunc(ctx, t.callerGone)
	}
	if d := t.spec.AutoBackground; d > 0 {
		t.autoBgStop = r.clock.AfterFunc(d, func() { t.background(false) })
	}
}

func (r *Registry) emitStarted(t *Task) {
	bg := t.spec.Background
	t.emitMu.Lock()
	defer t.emitMu.Unlock()
	r.emit(Event{
		Subtype:        SubtypeTaskStarted,
		TaskID:         t.id,
		ToolUseID:      t.spec.ToolUseID,
		Description:    t.spec.Description,
		TaskType:       string(t.spec.Kind),
		Prompt:         t.spec.Prompt,
		SubagentType:   t.spec.SubagentType,
		IsBackgrounded: &bg,
		ParentTaskID:   t.parentID,
	})
}

func (r *Registry) emit(ev Event) {
	if r.cfg.OnEvent == nil {
		return
	}
	r.randMu.Lock()
	id, err := newUUID(r.cfg.Rand)
	r.randMu.Unlock()
	if err == nil {
		ev.UUID = id
	}
	ev.Type, ev.SessionID = "system", r.cfg.SessionID
	r.cfg.OnEvent(ev)
}

// own runs a task's body and finishes the task.
func (r *Registry) own(ctx context.Context, t *Task, run RunFunc) {
	oc, err := safeRun(ctx, t, run)
	r.finish(t, oc, err)
}

func safeRun(ctx context.Context, t *Task, run RunFunc) (oc Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("task %s panicked: %v", t.id, p)
			t.out.WriteLine(fmt.Sprintf("panic: %v\n%s", p, debug.Stack()))
		}
	}()
	return run(ctx, t)
}

// finish is the only path to a terminal state: flush the transcript, mark
// the task, notify once, then release waiters.
func (r *Registry) finish(t *Task, oc Outcome, runErr error) {
	outErr := t.out.Close()
	end := r.clock.Now()
	p := t.progress()
	res := &Result{
		Text: oc.Text, TotalTokens: cmp.Or(oc.TotalTokens, p.TotalTokens()),
		ToolUses: cmp.Or(oc.ToolUses, p.ToolUses), Duration: end.Sub(t.start),
		ExitCode: oc.ExitCode, WorktreePath: oc.WorktreePath, WorktreeBranch: oc.WorktreeBranch,
	}

	t.mu.Lock()
	status, errText, sum := t.decideLocked(oc, runErr)
	if transition(t.status, status) != nil {
		// Unreachable: finish runs once per task and is the only way to a
		// terminal state. Keep the first outcome rather than rewrite it.
		t.mu.Unlock()
		return
	}
	t.status, t.result, t.errText, t.end = status, res, errText, end
	if outErr != nil {
		t.outputErr = outErr.Error()
	}
	bg := t.backgrounded
	stops := []func() bool{t.unlink, t.autoBgStop}
	t.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	t.cancel()

	n := Notification{
		TaskID: t.id, Kind: t.spec.Kind, ToolUseID: t.spec.ToolUseID, OutputFile: t.out.Path(),
		Status: status, Summary: sum, Result: res.Text,
		WorktreePath: res.WorktreePath, WorktreeBranch: res.WorktreeBranch,
	}
	if t.spec.Kind.IsAgent() {
		n.Usage = &Usage{TotalTokens: res.TotalTokens, ToolUses: res.ToolUses, DurationMs: res.Duration.Milliseconds()}
	}
	patch := Patch{Status: string(status), EndTime: end.UnixMilli(), Error: errText}
	if status == StatusCompleted {
		patch.Error = ""
	}
	t.emitUpdated(patch)
	t.emitFinal(Event{
		Subtype: SubtypeTaskNotification, TaskID: t.id, ToolUseID: t.spec.ToolUseID,
		Status: status.eventStatus(), OutputFile: n.OutputFile, Summary: sum, Usage: n.Usage,
	})
	// A foreground task's result goes back through Await, so it counts as
	// notified without a queue entry; so does a task nobody listens to.
	t.notifyMu.Lock()
	first := t.notified.CompareAndSwap(false, true)
	if first {
		if bg && t.spec.Queue != nil {
			id := t.id
			t.spec.Queue.Enqueue(Item{Kind: ItemNotification, Notification: &n, delivered: func() { _ = r.Release(id) }})
		} else {
			_ = r.Release(t.id) // nobody is to be notified
		}
	}
	t.notifyMu.Unlock()
	if first {
		r.scheduleEviction(t)
	}
	// Only now does the task stop counting as outstanding: its
	// notification (if any) is already in the queue.
	t.mu.Lock()
	t.settled = true
	t.mu.Unlock()
	if bg {
		r.levelRemove(t)
	}
	close(t.done)
}

// decideLocked picks the terminal state: a stop request wins, then the
// run's error, then a shell's non-zero exit code.
func (t *Task) decideLocked(oc Outcome, runErr error) (Status, string, string) {
	k, d := t.spec.Kind, t.spec.Description
	switch {
	case t.stopRequested:
		return StatusKilled, t.stopReason, summary(k, d, StatusKilled, "", nil)
	case runErr != nil:
		return StatusFailed, runErr.Error(), summary(k, d, StatusFailed, runErr.Error(), oc.ExitCode)
	case k == KindLocalBash && oc.ExitCode != nil && *oc.ExitCode != 0:
		return StatusFailed, fmt.Sprintf("exit code %d", *oc.ExitCode), summary(k, d, StatusFailed, "", oc.ExitCode)
	}
	if oc.Summary != "" {
		return StatusCompleted, "", oc.Summary
	}
	return StatusCompleted, "", summary(k, d, StatusCompleted, "", oc.ExitCode)
}

// Get finds a listed task by task id, then by name, then by agent id.
func (r *Registry) Get(idOrName string) (*Task, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range []map[string]*Task{r.tasks, r.byName, r.byAgent} {
		if t := m[idOrName]; t != nil {
			return t, true
		}
	}
	return nil, false
}

func (r *Registry) lookup(idOrName string) (*Task, error) {
	if t, ok := r.Get(idOrName); ok {
		return t, nil
	}
	return nil, fmt.Errorf("task %q: %w", idOrName, ErrNotFound)
}

// List returns the states of all listed (not yet evicted) tasks, oldest
// first.
func (r *Registry) List() []State {
	r.mu.Lock()
	ts := make([]*Task, 0, len(r.tasks))
	for _, t := range r.tasks {
		ts = append(ts, t)
	}
	r.mu.Unlock()
	out := make([]State, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.State())
	}
	slices.SortFunc(out, func(a, b State) int {
		return cmp.Or(a.StartTime.Compare(b.StartTime), strings.Compare(a.ID, b.ID))
	})
	return out
}

// Running returns the states of the running tasks, oldest first.
func (r *Registry) Running() []State {
	return slices.DeleteFunc(r.List(), func(s State) bool { return s.Status.Terminal() })
}

// Outstanding counts the background tasks that will still notify q: those
// running, and those that ended but whose notification is not in q yet (a
// task stops counting only after its notification is enqueued). A
// print-mode lead keeps going while this is non-zero or q holds items: it
// checks Outstanding first, then q, and waits on q for each arrival.
func (r *Registry) Outstanding(q *Queue) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, t := range r.tasks {
		if t.spec.Queue != q || q == nil {
			continue
		}
		t.mu.Lock()
		if t.backgrounded && !t.settled {
			n++
		}
		t.mu.Unlock()
	}
	return n
}
