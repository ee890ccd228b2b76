package tasklist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/mailbox"
)

// Config configures a List over files. Only Dir is required.
type Config struct {
	// Dir holds the task files. Its parent must exist; Dir is created if
	// missing.
	Dir string
	// Now is the clock for createdAt and updatedAt (default time.Now).
	Now func() time.Time
	// LockTimeout bounds every lock wait whose context has a later deadline
	// or none (default 10 s).
	LockTimeout time.Duration
}

// List is a team's shared task list: one JSON file per task in a
// directory (Open), or one entry of a JetStream key-value bucket (OpenKV).
// It is safe for concurrent use by any number of goroutines, processes
// and, on JetStream, machines: every mutation is one atomic step (under
// the list's file lock, or a compare-and-set of the entry), and reads see
// a consistent list.
type List struct {
	b   backend
	now func() time.Time
}

// backend is where a List keeps its tasks: files (files.go) or a
// JetStream key-value entry (kv.go).
type backend interface {
	// read runs fn on the list as it is now.
	read(ctx context.Context, now time.Time, fn func(*listState) error) error
	// mutate runs fn on the list and stores what it changed, all of it or
	// nothing; fn may run more than once (a lost compare-and-set).
	mutate(ctx context.Context, now time.Time, fn func(*listState) error) error
	generation(ctx context.Context) (uint64, error)
	// where names the list in messages and is Dir for files.
	where() string
}

// Open opens the task list in cfg.Dir.
func Open(cfg Config) (*List, error) {
	if cfg.Dir == "" {
		return nil, errors.New("tasklist: Config.Dir is empty")
	}
	if err := os.Mkdir(cfg.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("task list %s: %w", cfg.Dir, err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = 10 * time.Second
	}
	return &List{b: &files{cfg: cfg}, now: cfg.Now}, nil
}

// Dir returns the directory of the task files; for a list on JetStream it
// names the bucket and key.
func (l *List) Dir() string { return l.b.where() }

// listState is the task list as read under the lock.
type listState struct {
	where    string           // the list, for messages
	tasks    map[string]*Task // readable tasks
	bad      map[string]error // id → *jsonfile.Error for unreadable tasks
	order    []string         // ids of readable tasks, in numeric order
	maxID    uint64           // largest id stored, readable or not
	hwm      uint64           // the highest id ever allocated, as stored
	newHWM   uint64           // set by Create: the mark to store first
	changed  map[string]bool  // tasks to write
	removed  map[string]bool  // tasks to delete
	repaired map[string]bool  // tasks normalize changed
	now      time.Time        // the time of this operation
}

func newState(where string, now time.Time) *listState {
	return &listState{
		where: where, tasks: map[string]*Task{}, bad: map[string]error{},
		changed: map[string]bool{}, removed: map[string]bool{}, repaired: map[string]bool{},
		now: now,
	}
}

// add records a stored task (id from its file name or key) or why it
// cannot be read.
func (st *listState) add(id, label string, data []byte) {
	st.maxID = max(st.maxID, idNum(id))
	t, err := ParseTask(label, data)
	if err == nil && t.ID != id {
		err = &jsonfile.Error{Path: label, Err: fmt.Errorf("the task says id %q but its name says %q", t.ID, id), Hint: taskHint}
	}
	if err != nil {
		st.bad[id] = err
		return
	}
	st.tasks[id] = &t
	st.order = append(st.order, id)
}

// loaded finishes a state after every task was added.
func (st *listState) loaded() {
	slices.SortFunc(st.order, compareIDs)
	st.normalize()
}

// dirty reports whether a mutation has anything to store; it folds what
// normalize repaired into changed.
func (st *listState) dirty() bool {
	if len(st.changed) == 0 && len(st.removed) == 0 && st.newHWM == 0 {
		return false
	}
	for id := range st.repaired {
		st.changed[id] = true
	}
	return true
}

// touch marks task id changed and stamps it.
func (st *listState) touch(id string) {
	st.changed[id] = true
	if t := st.tasks[id]; t != nil {
		t.UpdatedAt = st.now
	}
}

// task returns the readable task id, or an error naming why not.
func (st *listState) task(id string) (*Task, error) {
	if err := ValidateTaskID(id); err != nil {
		return nil, err
	}
	if t := st.tasks[id]; t != nil {
		return t, nil
	}
	if err := st.bad[id]; err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: #%s", ErrTaskNotFound, id)
}

// view returns a copy of t with OpenBlockers filled in.
func (st *listState) view(t *Task) Task {
	out := t.Clone()
	out.OpenBlockers = nil
	for _, b := range st.openBlockers(t) {
		out.OpenBlockers = append(out.OpenBlockers, b.ID)
	}
	return out
}

func (l *List) read(ctx context.Context, fn func(*listState) error) error {
	return l.b.read(ctx, l.now(), fn)
}

func (l *List) mutate(ctx context.Context, fn func(*listState) error) error {
	return l.b.mutate(ctx, l.now(), fn)
}

func slicesSortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, compareIDs)
	return out
}

// Generation returns a counter that every mutation of the list increments
// (0 for a list never changed; on JetStream the entry's revision). Poll it
// to learn that the list changed.
func (l *List) Generation() (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return l.b.generation(ctx)
}

// TaskSpec describes a new task. Subject is required.
type TaskSpec struct {
	Subject     string
	Description string
	ActiveForm  string
	Owner       string
	Metadata    map[string]json.RawMessage
	// Blocks and BlockedBy are ids of existing tasks.
	Blocks    []string
	BlockedBy []string
}

// Create adds a pending task with the next id.
func (l *List) Create(ctx context.Context, spec TaskSpec) (Task, error) {
	if err := checkText("subject", spec.Subject, maxSubjectLen, true); err != nil {
		return Task{}, err
	}
	if err := checkText("description", spec.Description, maxDescriptionLen, false); err != nil {
		return Task{}, err
	}
	if err := checkText("activeForm", spec.ActiveForm, maxSubjectLen, false); err != nil {
		return Task{}, err
	}
	if err := checkOwner(spec.Owner); err != nil {
		return Task{}, err
	}
	meta, err := mergeMetadata(nil, spec.Metadata)
	if err != nil {
		return Task{}, err
	}
	var out Task
	err = l.mutate(ctx, func(st *listState) error {
		n := max(st.hwm, st.maxID, st.newHWM) + 1
		id := strconv.FormatUint(n, 10)
		st.newHWM = n
		now := st.now
		t := &Task{
			ID: id, Subject: spec.Subject, Description: spec.Description,
			ActiveForm: spec.ActiveForm, Owner: spec.Owner, Status: StatusPending,
			Metadata: meta, CreatedAt: now, UpdatedAt: now,
		}
		st.tasks[id] = t
		st.order = append(st.order, id)
		st.touch(id)
		for _, b := range spec.Blocks {
			if err := st.addEdge(id, b); err != nil {
				return err
			}
		}
		for _, b := range spec.BlockedBy {
			if err := st.addEdge(b, id); err != nil {
				return err
			}
		}
		out = st.view(t)
		return nil
	})
	return out, err
}

// Get returns task id.
func (l *List) Get(ctx context.Context, id string) (Task, error) {
	if err := ValidateTaskID(id); err != nil {
		return Task{}, err
	}
	var out Task
	err := l.read(ctx, func(st *listState) error {
		t, err := st.task(id)
		if err != nil {
			return err
		}
		out = st.view(t)
		return nil
	})
	return out, err
}

// List returns every readable task in id order. Unreadable task files do
// not hide the others: their errors (each a *jsonfile.Error naming the file)
// are returned joined, together with the tasks.
func (l *List) List(ctx context.Context) ([]Task, error) {
	var out []Task
	var bad error
	err := l.read(ctx, func(st *listState) error {
		for _, id := range st.order {
			out = append(out, st.view(st.tasks[id]))
		}
		ids := make([]string, 0, len(st.bad))
		for id := range st.bad {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, compareIDs)
		errs := make([]error, len(ids))
		for i, id := range ids {
			errs[i] = st.bad[id]
		}
		bad = errors.Join(errs...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, bad
}

func checkOwner(owner string) error {
	if owner == "" {
		return nil
	}
	if err := mailbox.ValidateName(owner); err != nil { // an owner is a member, named as its inbox
		return fmt.Errorf("%w: owner: %w", ErrInvalidTask, err)
	}
	return nil
}

// mergeMetadata applies patch to meta: a null value deletes its key.
func mergeMetadata(meta, patch map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if len(patch) == 0 {
		return meta, nil
	}
	out := jsonfile.CloneFields(meta)
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	for k, v := range patch {
		if k == "" {
			return nil, fmt.Errorf("%w: metadata keys must not be empty", ErrInvalidTask)
		}
		if !json.Valid(v) {
			return nil, fmt.Errorf("%w: metadata %q is not valid JSON", ErrInvalidTask, clip.Runes(k, 40))
		}
		if string(bytes.TrimSpace(v)) == "null" {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	if data, _ := json.Marshal(out); len(data) > maxMetadataBytes {
		return nil, fmt.Errorf("%w: metadata is larger than %d bytes", ErrInvalidTask, maxMetadataBytes)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
