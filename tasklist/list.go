package tasklist

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/mailbox"
)

// Files of a task list directory besides the tasks themselves.
const (
	taskLockFile      = ".lock"
	highWaterMarkFile = ".highwatermark"
	generationFile    = ".generation"
)

// Config configures a List. Only Dir is required.
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
// directory. It is safe for concurrent use by any number of goroutines and
// processes; every mutation holds the list's file lock, and reads hold it
// shared.
type List struct {
	cfg Config
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
	return &List{cfg: cfg}, nil
}

// Dir returns the directory of the task files.
func (l *List) Dir() string { return l.cfg.Dir }

// listState is the task list as read under the lock.
type listState struct {
	dir      string
	tasks    map[string]*Task // readable tasks
	bad      map[string]error // id → *jsonfile.Error for unreadable task files
	order    []string         // ids of readable tasks, in numeric order
	maxID    uint64           // largest id with a file, readable or not
	changed  map[string]bool  // tasks to write
	removed  map[string]bool  // task files to delete
	repaired map[string]bool  // tasks normalize changed
	now      time.Time        // the time of this operation
}

// touch marks task id changed and stamps it.
func (st *listState) touch(id string) {
	st.changed[id] = true
	if t := st.tasks[id]; t != nil {
		t.UpdatedAt = st.now
	}
}

var taskFileRE = lazyre.New(`^([1-9][0-9]{0,14})\.json$`)

func (l *List) load() (*listState, error) {
	entries, err := os.ReadDir(l.cfg.Dir)
	if err != nil {
		return nil, l.gone(err)
	}
	st := &listState{
		dir: l.cfg.Dir, tasks: map[string]*Task{}, bad: map[string]error{},
		changed: map[string]bool{}, removed: map[string]bool{}, repaired: map[string]bool{},
		now: l.cfg.Now(),
	}
	for _, e := range entries {
		m := taskFileRE.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		id := m[1]
		st.maxID = max(st.maxID, idNum(id))
		path := filepath.Join(l.cfg.Dir, e.Name())
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			st.bad[id] = &jsonfile.Error{Path: path, Err: err}
			continue
		}
		t, err := ParseTask(path, data)
		if err == nil && t.ID != id {
			err = &jsonfile.Error{Path: path, Err: fmt.Errorf("the file says id %q but its name says %q", t.ID, id), Hint: taskHint}
		}
		if err != nil {
			st.bad[id] = err
			continue
		}
		st.tasks[id] = &t
		st.order = append(st.order, id)
	}
	slices.SortFunc(st.order, compareIDs)
	st.normalize()
	return st, nil
}

// gone maps errors that mean the directory (so the team) no longer exists.
func (l *List) gone(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, filelock.ErrDirGone) {
		return fmt.Errorf("task list %s: %w: the directory is gone (was the team deleted?)", l.cfg.Dir, ErrGone)
	}
	return fmt.Errorf("task list %s: %w", l.cfg.Dir, err)
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

// read runs fn on the list under the shared lock.
func (l *List) read(ctx context.Context, fn func(*listState) error) error {
	lk, err := filelock.Sidecar(ctx, filepath.Join(l.cfg.Dir, taskLockFile), true, l.cfg.LockTimeout)
	if err != nil {
		return l.gone(err)
	}
	defer lk.Unlock()
	st, err := l.load()
	if err != nil {
		return err
	}
	return fn(st)
}

// mutate runs fn under the exclusive lock, then writes what it changed
// (and what normalize repaired), removes what it removed, and bumps the
// generation. If fn fails nothing is written.
func (l *List) mutate(ctx context.Context, fn func(*listState) error) error {
	lk, err := filelock.Sidecar(ctx, filepath.Join(l.cfg.Dir, taskLockFile), false, l.cfg.LockTimeout)
	if err != nil {
		return l.gone(err)
	}
	defer lk.Unlock()
	st, err := l.load()
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	if len(st.changed) == 0 && len(st.removed) == 0 {
		return nil
	}
	for id := range st.repaired {
		st.changed[id] = true
	}
	ids := slicesSortedKeys(st.changed)
	for _, id := range ids {
		t := st.tasks[id]
		if t == nil || st.removed[id] {
			continue
		}
		data, err := MarshalTask(*t)
		if err != nil {
			return fmt.Errorf("task #%s: %w", id, err)
		}
		if err := atomicfile.Write(filepath.Join(l.cfg.Dir, id+".json"), data, 0o600); err != nil {
			return fmt.Errorf("write task #%s: %w", id, err)
		}
	}
	// Files go last: a crash before this point leaves the task with its
	// references already removed elsewhere, and Delete can be repeated.
	for _, id := range slicesSortedKeys(st.removed) {
		if err := os.Remove(filepath.Join(l.cfg.Dir, id+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete task #%s: %w", id, err)
		}
	}
	return l.bumpGeneration()
}

func slicesSortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, compareIDs)
	return out
}

// readCounter reads a decimal counter file; missing or unreadable is 0.
func readCounter(path string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	return n
}

func (l *List) bumpGeneration() error {
	path := filepath.Join(l.cfg.Dir, generationFile)
	n := readCounter(path) + 1
	return atomicfile.Write(path, []byte(strconv.FormatUint(n, 10)), 0o600)
}

// Generation returns a counter that every mutation of the list increments
// (0 for a list never changed). Poll it to learn that the list changed.
func (l *List) Generation() (uint64, error) {
	if _, err := os.Stat(l.cfg.Dir); err != nil {
		return 0, l.gone(err)
	}
	return readCounter(filepath.Join(l.cfg.Dir, generationFile)), nil
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
		hwmPath := filepath.Join(st.dir, highWaterMarkFile)
		n := max(readCounter(hwmPath), st.maxID) + 1
		id := strconv.FormatUint(n, 10)
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
		// The mark goes first, so an id is never handed out twice even if
		// the task file is lost to a crash.
		if err := atomicfile.Write(hwmPath, []byte(id), 0o600); err != nil {
			return fmt.Errorf("task list %s: %w", st.dir, err)
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
