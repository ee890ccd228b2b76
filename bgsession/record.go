package bgsession

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/jsonfile"
)

// Status values (while the process lives).
const (
	StatusBusy    = "busy"    // a turn runs
	StatusWaiting = "waiting" // a permission prompt waits for someone
	StatusIdle    = "idle"    // the session waits for a prompt
)

// State values.
const (
	StateWorking = "working"
	StateBlocked = "blocked" // waiting for a permission decision
	StateDone    = "done"    // the prompt is answered
	StateStopped = "stopped" // stop or kill ended it
	StateFailed  = "failed"  // it could not start or its run failed
	StateDead    = "dead"    // the record says it runs but it does not
)

// Record is one background session, as $COHORT_HOME/bg/{id}.json holds it.
type Record struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	SessionID string  `json:"sessionId,omitempty"`
	PID       int     `json:"pid"`
	ProcStart uint64  `json:"procStart,omitempty"`
	Cwd       string  `json:"cwd"`
	Status    string  `json:"status,omitempty"`
	State     string  `json:"state"`
	Intent    string  `json:"intent,omitempty"`
	Detail    string  `json:"detail,omitempty"`
	CostUSD   float64 `json:"costUsd"`
	Agents    int     `json:"agents"`
	StartedAt int64   `json:"startedAt"`
	UpdatedAt int64   `json:"updatedAt"`
	LogPath   string  `json:"logPath"`
	Worktree  string  `json:"worktree,omitempty"`
	// Flags are the session flags it was started with (model, permission
	// mode, tools, directories, settings…), as arguments; respawn starts
	// it again with them.
	Flags []string `json:"flags,omitempty"`
	// Alive is computed when listed (Check), never stored.
	Alive bool `json:"alive"`
}

// Ended reports whether the record's state says the session is over.
func (r Record) Ended() bool {
	switch r.State {
	case StateStopped, StateFailed, StateDead:
		return true
	}
	return false
}

// Registry is the directory of records: $COHORT_HOME/bg. Sockets is the
// directory of session sockets, $COHORT_HOME/sessions.
type Registry struct {
	Dir     string
	Sockets string
}

// Open returns the registry under cohortHome, creating its directory
// (mode 0700).
func Open(cohortHome string) (*Registry, error) {
	if !filepath.IsAbs(cohortHome) {
		return nil, fmt.Errorf("bgsession: COHORT_HOME %q is not an absolute path", cohortHome)
	}
	r := &Registry{Dir: filepath.Join(cohortHome, "bg"), Sockets: filepath.Join(cohortHome, "sessions")}
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("bgsession: %w", err)
	}
	return r, nil
}

// NewID returns a fresh short id: 8 hex digits.
func NewID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Path is the record file of id.
func (g *Registry) Path(id string) string { return filepath.Join(g.Dir, id+".json") }

// ControlPath is the control socket of id (the attach protocol).
func (g *Registry) ControlPath(id string) string { return filepath.Join(g.Dir, id+".ctl") }

// LogPath is the output log of id.
func (g *Registry) LogPath(id string) string { return filepath.Join(g.Dir, id+".log") }

// Write stores rec atomically, stamping UpdatedAt.
func (g *Registry) Write(rec Record) error {
	if err := validID(rec.ID); err != nil {
		return err
	}
	rec.Alive = false
	rec.UpdatedAt = time.Now().UnixMilli()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(g.Path(rec.ID), append(data, '\n'), 0o600)
}

// Read reads the record of id.
func (g *Registry) Read(id string) (Record, error) {
	if err := validID(id); err != nil {
		return Record{}, err
	}
	return readRecord(g.Path(id))
}

// Update reads the record of id, applies f and writes it back. Only the
// record's one writer (the doc says who) may call it.
func (g *Registry) Update(id string, f func(*Record)) error {
	rec, err := g.Read(id)
	if err != nil {
		return err
	}
	f(&rec)
	return g.Write(rec)
}

// ReadError is a record that could not be read; List skips it.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("%s: %v (skipped; remove the file if it is not a session)", e.Path, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

func readRecord(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Record{}, &ReadError{Path: path, Err: err}
	}
	var rec Record
	if err := jsonfile.Decode(data, &rec); err != nil {
		return Record{}, jsonfile.Explain(path, data, err, "skipped; remove the file if it is not a background session")
	}
	want := strings.TrimSuffix(filepath.Base(path), ".json")
	if rec.ID != want {
		return Record{}, &ReadError{Path: path, Err: fmt.Errorf("its id %q is not its file name's %q", rec.ID, want)}
	}
	return rec, nil
}

// List reads every record, newest first. Records that cannot be read are
// returned as errors (each a *ReadError or *jsonfile.Error naming its
// path) and left out of the list.
func (g *Registry) List() ([]Record, []error) {
	paths, err := filepath.Glob(filepath.Join(g.Dir, "*.json"))
	if err != nil {
		return nil, []error{err}
	}
	var recs []Record
	var errs []error
	for _, p := range paths {
		rec, err := readRecord(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b Record) int {
		return cmp.Or(cmp.Compare(b.StartedAt, a.StartedAt), strings.Compare(a.ID, b.ID))
	})
	return recs, errs
}

// Delete removes the record and log of id.
func (g *Registry) Delete(id string) error {
	if err := validID(id); err != nil {
		return err
	}
	err := os.Remove(g.Path(id))
	for _, p := range []string{g.LogPath(id), g.ControlPath(id)} {
		if lerr := os.Remove(p); lerr != nil && !errors.Is(lerr, os.ErrNotExist) {
			err = errors.Join(err, lerr)
		}
	}
	return err
}

func validID(id string) error {
	if len(id) == 0 || len(id) > 64 || strings.ContainsAny(id, "/\\.") || strings.TrimSpace(id) != id {
		return fmt.Errorf("bgsession: %q is not a session id", id)
	}
	return nil
}
