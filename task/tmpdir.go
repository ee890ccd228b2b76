package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/lease"
)

// The session temporary directory $COHORT_HOME/tmp/{session}/:
//
//	.lock               shared lease of every process using the directory
//	tasks/{id}.output   a task's output file
//	tasks/{id}.pending  the task's notification is not delivered yet
//
// A directory whose lease nobody holds belongs to sessions that ended; it
// is swept (see sweepTmp) except for the output files still pending.
const (
	sessionLock = ".lock"
	pendingExt  = ".pending"
	outputExt   = ".output"
)

// DefaultPendingRetention is how long a pending output file of an ended
// session is kept for a resume that has not come (as long as Claude Code
// keeps transcripts by default).
const DefaultPendingRetention = 30 * 24 * time.Hour

// Pending is the durable record of a task whose notification has not been
// delivered: written when the task starts, removed when its notification
// is handed to its parent (or its result was read, or nobody is to be
// notified). What survives a crash tells a resumed session which tasks of
// an earlier process never reported, and keeps their output files.
type Pending struct {
	TaskID        string    `json:"taskId"`
	Kind          Kind      `json:"kind"`
	ToolUseID     string    `json:"toolUseId,omitempty"`
	Description   string    `json:"description"`
	Name          string    `json:"name,omitempty"` // Spec.Name: a workflow task's run id
	AgentID       string    `json:"agentId,omitempty"`
	ParentAgentID string    `json:"parentAgentId,omitempty"`
	OutputFile    string    `json:"outputFile"`
	Started       time.Time `json:"started"`
	// PID is the process that ran the task.
	PID int `json:"pid"`
}

// claimSessionDir makes Home/tmp/SessionID/tasks and takes the directory's
// shared lease, so that no other process sweeps it while this one runs. A
// sweep may remove the directory between the two steps; then it is made
// again.
func claimSessionDir(home, session string) (string, *lease.Lease, error) {
	for range 5 {
		dir, err := makeTaskDir(home, session)
		if errors.Is(err, fs.ErrNotExist) {
			// Another process's sweep removed the new, not yet leased,
			// session directory between two of its mkdirs (sessions
			// starting at once in one COHORT_HOME: a worker's jobs).
			continue
		}
		if err != nil {
			return "", nil, err
		}
		l, err := lease.Acquire(context.Background(), filepath.Join(filepath.Dir(dir), sessionLock),
			lease.Holder{}, lease.Options{Shared: true, Wait: 30 * time.Second})
		if errors.Is(err, fs.ErrNotExist) {
			continue // swept meanwhile: make it again
		}
		if err != nil {
			return "", nil, fmt.Errorf("task registry: %w", err)
		}
		if _, err := os.Stat(dir); err != nil {
			l.Release()
			continue
		}
		return dir, l, nil
	}
	return "", nil, fmt.Errorf("task registry: %s keeps disappearing; is another program removing it?", filepath.Join(home, "tmp", session))
}

// markPending records t's notification as not delivered yet.
func (r *Registry) markPending(t *Task) error {
	p := Pending{TaskID: t.id, Kind: t.spec.Kind, ToolUseID: t.spec.ToolUseID, Description: t.spec.Description,
		Name: t.spec.Name, AgentID: t.spec.AgentID, ParentAgentID: t.spec.ParentAgentID, OutputFile: t.out.Path(),
		Started: r.clock.Now().UTC(), PID: os.Getpid()}
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(r.dir, t.id+pendingExt), data, 0o600)
}

// Release records that the notification of task id has been delivered, so
// its output file may go when the session's directory is cleaned. The
// registry calls it itself when a notification is drained from its queue
// (or the result was read through TaskOutput, or nobody is notified); call
// it for a notification made some other way — the killed notification a
// resumed session gives for a task of an earlier process — once it is in
// the conversation. Releasing an unknown id does nothing.
func (r *Registry) Release(id string) error {
	if !validID.MatchString(id) {
		return fmt.Errorf("task release: %q is not a task id", id)
	}
	err := os.Remove(filepath.Join(r.dir, id+pendingExt))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("task release %s: %w", id, err)
	}
	return nil
}

// Undelivered lists the tasks of this session, run by earlier processes,
// whose notifications were never delivered (the process ended first), with
// their output files. Tasks of this registry are left out. A record that
// cannot be read is reported by file in the error; the others are still
// returned.
func (r *Registry) Undelivered() ([]Pending, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("task undelivered: %w", err)
	}
	var out []Pending
	var errs []error
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), pendingExt)
		if !ok || !validID.MatchString(id) {
			continue
		}
		if _, mine := r.Get(id); mine {
			continue
		}
		path := filepath.Join(r.dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var p Pending
		if err := json.Unmarshal(data, &p); err != nil || p.TaskID != id {
			errs = append(errs, fmt.Errorf("%s: not a pending-task record (%v); remove it if the task does not matter", path, err))
			continue
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Pending) int { return a.Started.Compare(b.Started) })
	return out, errors.Join(errs...)
}

// closeSessionDir gives up this process's lease on the session directory
// and, when no other process uses it, cleans it.
func (r *Registry) closeSessionDir() {
	if r.lease == nil {
		return
	}
	r.lease.Release()
	r.lease = nil
	sess := filepath.Dir(r.dir)
	l, err := lease.Try(filepath.Join(sess, sessionLock), lease.Holder{}, lease.Options{})
	if err != nil || l == nil {
		return // another process of the session still runs, or it is gone
	}
	defer l.Release()
	r.logf(cleanSessionDir(sess, r.cfg.PendingRetention, r.clock.Now()))
}

// sweepTmp cleans the directories of Home/tmp whose lease nobody holds:
// sessions that ended without cleaning up (killed). keep is this session.
func sweepTmp(home, keep string, retention time.Duration, now time.Time) error {
	root := filepath.Join(home, "tmp")
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || e.Name() == keep || !sessionIDPattern.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		l, err := lease.Try(filepath.Join(dir, sessionLock), lease.Holder{}, lease.Options{})
		if err != nil || l == nil {
			continue // in use, or removed meanwhile
		}
		errs = append(errs, cleanSessionDir(dir, retention, now))
		l.Release()
	}
	return errors.Join(errs...)
}

// cleanSessionDir removes everything in a session directory but the
// output files of pending tasks (and their records) younger than
// retention; the directory itself goes when nothing is left. The caller
// holds the directory's lease exclusively.
func cleanSessionDir(dir string, retention time.Duration, now time.Time) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	keep := false
	for _, e := range entries {
		switch e.Name() {
		case sessionLock:
			continue
		case "tasks":
			kept, err := cleanTasksDir(filepath.Join(dir, "tasks"), retention, now)
			keep = keep || kept
			errs = append(errs, err)
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
	if !keep {
		// The lock file goes last: a process that waits for it finds it
		// gone and makes the directory again (claimSessionDir).
		errs = append(errs, removeIfExists(filepath.Join(dir, "tasks")), removeIfExists(filepath.Join(dir, sessionLock)), removeIfExists(dir))
	}
	return errors.Join(errs...)
}

// cleanTasksDir removes the output files nothing waits for, and reports
// whether any file is kept.
func cleanTasksDir(dir string, retention time.Duration, now time.Time) (bool, error) {
	if retention <= 0 {
		retention = DefaultPendingRetention
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	pending := map[string]bool{}
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), pendingExt); ok {
			info, err := e.Info()
			if err == nil && now.Sub(info.ModTime()) < retention {
				pending[id] = true
			}
		}
	}
	var errs []error
	kept := false
	for _, e := range entries {
		name := e.Name()
		id := strings.TrimSuffix(strings.TrimSuffix(name, pendingExt), outputExt)
		if pending[id] && (strings.HasSuffix(name, pendingExt) || strings.HasSuffix(name, outputExt)) {
			kept = true
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Join(dir, name)))
	}
	return kept, errors.Join(errs...)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (r *Registry) logf(err error) {
	if err != nil && r.cfg.Logf != nil {
		r.cfg.Logf("task registry: cleaning temporary files: %v", err)
	}
}
