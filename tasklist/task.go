package tasklist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/mailbox"
)

// Status is a task's state.
type Status string

// Task states, as Claude Code writes them.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
)

// Valid reports whether s is one of the three states.
func (s Status) Valid() bool {
	return s == StatusPending || s == StatusInProgress || s == StatusCompleted
}

// Task is one entry of a team's shared task list, stored as tasks/{id}.json
// with Claude Code's field names.
type Task struct {
	ID          string // "1", "2", …
	Subject     string
	Description string
	ActiveForm  string // present-continuous label shown while in progress
	Owner       string // agent name; empty when unclaimed
	Status      Status
	Blocks      []string // ids of tasks that wait for this one
	BlockedBy   []string // ids of tasks this one waits for
	Metadata    map[string]json.RawMessage
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Extra holds fields Cohort does not know, verbatim.
	Extra map[string]json.RawMessage

	// OpenBlockers is computed, never stored: the ids in BlockedBy whose
	// tasks are not completed. The task is blocked while it is non-empty.
	OpenBlockers []string
}

// Blocked reports whether some task this one waits for is not completed.
func (t *Task) Blocked() bool { return len(t.OpenBlockers) > 0 }

// Clone returns a deep copy of t.
func (t Task) Clone() Task {
	t.Blocks = slices.Clone(t.Blocks)
	t.BlockedBy = slices.Clone(t.BlockedBy)
	t.OpenBlockers = slices.Clone(t.OpenBlockers)
	t.Metadata = jsonfile.CloneFields(t.Metadata)
	t.Extra = jsonfile.CloneFields(t.Extra)
	return t
}

// Input limits for task fields.
const (
	maxSubjectLen     = 1_000     // characters
	maxDescriptionLen = 100_000   // characters
	maxMetadataBytes  = 64 * 1024 // encoded
)

var taskIDRE = lazyre.New(`^[1-9][0-9]{0,14}$`)

// ValidateTaskID reports whether id is a task id: a positive decimal
// integer without leading zeros. A leading '#' is not part of the id.
func ValidateTaskID(id string) error {
	if !taskIDRE.MatchString(id) {
		return fmt.Errorf("%w: task id %q: use the number shown in the task list, such as \"3\"", ErrInvalidTask, clip.Runes(id, 40))
	}
	return nil
}

// idNum returns a valid id's numeric value.
func idNum(id string) uint64 {
	n, _ := strconv.ParseUint(id, 10, 64)
	return n
}

// compareIDs orders ids numerically.
func compareIDs(a, b string) int {
	na, nb := idNum(a), idNum(b)
	switch {
	case na < nb:
		return -1
	case na > nb:
		return 1
	}
	return strings.Compare(a, b)
}

type wireTask struct {
	ID          string                     `json:"id"`
	Subject     string                     `json:"subject"`
	Description string                     `json:"description"`
	ActiveForm  string                     `json:"activeForm,omitempty"`
	Owner       string                     `json:"owner,omitempty"`
	Status      string                     `json:"status"`
	Blocks      []string                   `json:"blocks"`
	BlockedBy   []string                   `json:"blockedBy"`
	Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`
	CreatedAt   json.Number                `json:"createdAt,omitempty"`
	UpdatedAt   json.Number                `json:"updatedAt,omitempty"`

	extra map[string]json.RawMessage
}

// MarshalJSON writes the known fields, then the unknown ones in key order.
func (w wireTask) MarshalJSON() ([]byte, error) {
	type plain wireTask
	return jsonfile.WithFields(plain(w), w.extra)
}

var reflectWireTask = reflect.TypeFor[wireTask]()

const taskHint = "fix the file by hand or delete it"

// ParseTask decodes and checks a task file. path is used in messages only.
// Errors are *jsonfile.Error, with the line and column where known. A missing
// status reads as pending.
func ParseTask(path string, data []byte) (Task, error) {
	var w wireTask
	if err := jsonfile.Decode(data, &w); err != nil {
		return Task{}, jsonfile.Explain(path, data, err, taskHint)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("null")) {
		return Task{}, &jsonfile.Error{Path: path, Err: errors.New("the file holds null, not a task"), Hint: taskHint}
	}
	w.extra = jsonfile.Fields(data, reflectWireTask)
	t, err := w.task()
	if err != nil {
		return Task{}, &jsonfile.Error{Path: path, Err: err, Hint: taskHint}
	}
	return t, nil
}

func (w *wireTask) task() (Task, error) {
	if err := ValidateTaskID(w.ID); err != nil {
		return Task{}, fmt.Errorf("id: %w", err)
	}
	status := Status(w.Status)
	if w.Status == "" {
		status = StatusPending
	}
	if !status.Valid() {
		return Task{}, fmt.Errorf("status %q is not one of pending, in_progress, completed", clip.Runes(w.Status, 40))
	}
	if w.Owner != "" {
		if err := mailbox.ValidateName(w.Owner); err != nil {
			return Task{}, fmt.Errorf("owner: %w", err)
		}
	}
	for _, l := range []struct {
		name string
		ids  []string
	}{{"blocks", w.Blocks}, {"blockedBy", w.BlockedBy}} {
		for _, id := range l.ids {
			if err := ValidateTaskID(id); err != nil {
				return Task{}, fmt.Errorf("%s: %w", l.name, err)
			}
			if id == w.ID {
				return Task{}, fmt.Errorf("%s: the task lists itself", l.name)
			}
		}
	}
	created, err := jsonfile.MillisTime(w.CreatedAt, "createdAt")
	if err != nil {
		return Task{}, err
	}
	updated, err := jsonfile.MillisTime(w.UpdatedAt, "updatedAt")
	if err != nil {
		return Task{}, err
	}
	return Task{
		ID: w.ID, Subject: w.Subject, Description: w.Description, ActiveForm: w.ActiveForm,
		Owner: w.Owner, Status: status,
		Blocks: sortedIDs(w.Blocks), BlockedBy: sortedIDs(w.BlockedBy),
		Metadata: w.Metadata, CreatedAt: created, UpdatedAt: updated, Extra: w.extra,
	}, nil
}

// MarshalTask encodes t as a task file (two-space indentation, final
// newline). OpenBlockers is not stored.
func MarshalTask(t Task) ([]byte, error) {
	w := wireTask{
		ID: t.ID, Subject: t.Subject, Description: t.Description, ActiveForm: t.ActiveForm,
		Owner: t.Owner, Status: string(t.Status),
		Blocks: jsonfile.NonNil(t.Blocks), BlockedBy: jsonfile.NonNil(t.BlockedBy), Metadata: t.Metadata,
		extra: t.Extra,
	}
	if !t.CreatedAt.IsZero() {
		w.CreatedAt = jsonfile.Millis(t.CreatedAt)
	}
	if !t.UpdatedAt.IsZero() {
		w.UpdatedAt = jsonfile.Millis(t.UpdatedAt)
	}
	return jsonfile.Indent(w)
}

// sortedIDs returns ids deduplicated in numeric order.
func sortedIDs(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := slices.Clone(ids)
	slices.SortFunc(out, compareIDs)
	return slices.Compact(out)
}

// checkText validates a free-text field.
func checkText(field, s string, maxLen int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s must not be empty", ErrInvalidTask, field)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidTask, field)
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("%w: %s contains a NUL character", ErrInvalidTask, field)
	case utf8.RuneCountInString(s) > maxLen:
		return fmt.Errorf("%w: %s is longer than %d characters", ErrInvalidTask, field, maxLen)
	}
	return nil
}
