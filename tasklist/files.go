package tasklist

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Files of a task list directory besides the tasks themselves.
const (
	taskLockFile      = ".lock"
	highWaterMarkFile = ".highwatermark"
	generationFile    = ".generation"
)

// files keeps a list as one JSON file per task in a directory, every
// mutation under the directory's file lock.
type files struct {
	cfg Config
}

func (f *files) where() string { return f.cfg.Dir }

var taskFileRE = lazyre.New(`^([1-9][0-9]{0,14})\.json$`)

func (f *files) load(now time.Time) (*listState, error) {
	entries, err := os.ReadDir(f.cfg.Dir)
	if err != nil {
		return nil, f.gone(err)
	}
	st := newState(f.cfg.Dir, now)
	st.hwm = readCounter(filepath.Join(f.cfg.Dir, highWaterMarkFile))
	for _, e := range entries {
		m := taskFileRE.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		id := m[1]
		path := filepath.Join(f.cfg.Dir, e.Name())
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			st.maxID = max(st.maxID, idNum(id))
			st.bad[id] = &jsonfile.Error{Path: path, Err: err}
			continue
		}
		st.add(id, path, data)
	}
	st.loaded()
	return st, nil
}

// gone maps errors that mean the directory (so the team) no longer exists.
func (f *files) gone(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, filelock.ErrDirGone) {
		return fmt.Errorf("task list %s: %w: the directory is gone (was the team deleted?)", f.cfg.Dir, ErrGone)
	}
	return fmt.Errorf("task list %s: %w", f.cfg.Dir, err)
}

// locked loads the list under its lock (shared for reads); the caller
// unlocks.
func (f *files) locked(ctx context.Context, now time.Time, shared bool) (*listState, func(), error) {
	lk, err := filelock.Sidecar(ctx, filepath.Join(f.cfg.Dir, taskLockFile), shared, f.cfg.LockTimeout)
	if err != nil {
		return nil, nil, f.gone(err)
	}
	st, err := f.load(now)
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	return st, func() { lk.Unlock() }, nil
}

// read runs fn on the list under the shared lock.
func (f *files) read(ctx context.Context, now time.Time, fn func(*listState) error) error {
	st, unlock, err := f.locked(ctx, now, true)
	if err != nil {
		return err
	}
	defer unlock()
	return fn(st)
}

// mutate runs fn under the exclusive lock, then writes what it changed
// (and what normalize repaired), removes what it removed, and bumps the
// generation. If fn fails nothing is written.
func (f *files) mutate(ctx context.Context, now time.Time, fn func(*listState) error) error {
	st, unlock, err := f.locked(ctx, now, false)
	if err != nil {
		return err
	}
	defer unlock()
	if err := fn(st); err != nil {
		return err
	}
	if !st.dirty() {
		return nil
	}
	// The mark goes first, so an id is never handed out twice even if
	// the task file is lost to a crash.
	if st.newHWM != 0 {
		if err := atomicfile.Write(filepath.Join(f.cfg.Dir, highWaterMarkFile), []byte(strconv.FormatUint(st.newHWM, 10)), 0o600); err != nil {
			return fmt.Errorf("task list %s: %w", f.cfg.Dir, err)
		}
	}
	for _, id := range slicesSortedKeys(st.changed) {
		t := st.tasks[id]
		if t == nil || st.removed[id] {
			continue
		}
		data, err := MarshalTask(*t)
		if err != nil {
			return fmt.Errorf("task #%s: %w", id, err)
		}
		if err := atomicfile.Write(filepath.Join(f.cfg.Dir, id+".json"), data, 0o600); err != nil {
			return fmt.Errorf("write task #%s: %w", id, err)
		}
	}
	// Files go last: a crash before this point leaves the task with its
	// references already removed elsewhere, and Delete can be repeated.
	for _, id := range slicesSortedKeys(st.removed) {
		if err := os.Remove(filepath.Join(f.cfg.Dir, id+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete task #%s: %w", id, err)
		}
	}
	path := filepath.Join(f.cfg.Dir, generationFile)
	return atomicfile.Write(path, []byte(strconv.FormatUint(readCounter(path)+1, 10)), 0o600)
}

func (f *files) generation(context.Context) (uint64, error) {
	if _, err := os.Stat(f.cfg.Dir); err != nil {
		return 0, f.gone(err)
	}
	return readCounter(filepath.Join(f.cfg.Dir, generationFile)), nil
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
