package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/kvcas"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KVKey is the key of a task list in its bucket when KVConfig.Key is empty.
const KVKey = "tasks"

// KVConfig configures a List on a JetStream key-value bucket. Conn and
// KV are required.
type KVConfig struct {
	// Conn is the connection KV was opened on: reads ask the stream's
	// leader over it, so they see the latest write (package kvcas).
	Conn *nats.Conn
	KV   jetstream.KeyValue
	Key  string // default KVKey
	// Now is the clock for createdAt and updatedAt (default time.Now).
	Now func() time.Time
	// OnConflict, if set, is called with the number of lost
	// compare-and-sets of each mutation that lost any (for tests and
	// logs).
	OnConflict func(n int)
	// Signer, if set, signs each task written and checks each task read
	// (package team signs with its members' keys: any client of the
	// server may write the bucket).
	Signer Signer
}

// Signer signs the tasks of a list kept in a bucket.
type Signer interface {
	// Seal returns what the bucket holds for task id (its file-format
	// JSON), replacing prev (nil for a new task).
	Seal(ctx context.Context, id string, task []byte, prev json.RawMessage) (json.RawMessage, error)
	// Open returns the task held as entry (revision rev of the list) and
	// the entry that stands for it (entry, or one this machine accepted
	// before, which a write puts back); ok false passes the task over
	// (Open reported why). An error is a failure to check (the server
	// could not be reached), not a verdict.
	Open(ctx context.Context, id string, entry json.RawMessage, rev uint64) (task []byte, stands json.RawMessage, ok bool, err error)
	// Stored tells that entry, from Seal, is now the bucket's (the
	// write stands whatever Stored makes of it).
	Stored(id string, entry json.RawMessage)
}

// OpenKV opens the task list kept in cfg.KV under cfg.Key: the whole list
// is one entry, so every mutation is one compare-and-set and two machines
// can never both claim a task.
func OpenKV(cfg KVConfig) (*List, error) {
	if cfg.KV == nil || cfg.Conn == nil {
		return nil, errors.New("tasklist: KVConfig.KV or Conn is nil")
	}
	if cfg.Key == "" {
		cfg.Key = KVKey
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &List{b: &kvList{cfg: cfg}, now: cfg.Now}, nil
}

// kvList keeps a list as one key-value entry:
//
//	{"highWaterMark": 3, "tasks": {"1": {task}, "3": {task}}}
//
// each task in the file format. Entries of "tasks" that do not parse are
// reported like unreadable task files and written back untouched.
type kvList struct {
	cfg KVConfig
}

type kvDoc struct {
	HighWaterMark uint64                     `json:"highWaterMark"`
	Tasks         map[string]json.RawMessage `json:"tasks"`
}

const kvHint = "the entry is kept as it is: put back a good revision (nats kv history) or delete the task with TaskUpdate status deleted"

func (k *kvList) where() string {
	return fmt.Sprintf("JetStream bucket %s key %s", k.cfg.KV.Bucket(), k.cfg.Key)
}

// parse turns an entry into a list state and the raw tasks it came from.
// An entry that is not a task list at all is an error naming the bucket,
// key and revision: nothing can be changed until it is mended.
func (k *kvList) parse(ctx context.Context, e kvcas.Entry, now time.Time) (*listState, *kvDoc, error) {
	st := newState(k.where(), now)
	doc := &kvDoc{Tasks: map[string]json.RawMessage{}}
	if e.Data != nil {
		if err := jsonfile.Decode(e.Data, doc); err != nil {
			label := fmt.Sprintf("%s revision %d", k.where(), e.Revision)
			return nil, nil, jsonfile.Explain(label, e.Data, err,
				"nothing in the list can change until it is mended: put back a good revision (nats kv history) or delete the key to start an empty list")
		}
		if doc.Tasks == nil {
			doc.Tasks = map[string]json.RawMessage{}
		}
	}
	st.hwm = doc.HighWaterMark
	for id, raw := range doc.Tasks {
		label := fmt.Sprintf("%s task %q", k.where(), id)
		if err := ValidateTaskID(id); err != nil {
			st.bad[id] = &jsonfile.Error{Path: label, Err: err, Hint: kvHint}
			continue
		}
		if k.cfg.Signer != nil {
			task, stands, ok, err := k.cfg.Signer.Open(ctx, id, raw, e.Revision)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", label, err)
			}
			if !ok {
				// Passed over, and kept as it is; its id is not given
				// to a new task.
				st.maxID = max(st.maxID, idNum(id))
				continue
			}
			doc.Tasks[id], raw = stands, task
		}
		st.add(id, label, raw)
		var fe *jsonfile.Error
		if err := st.bad[id]; errors.As(err, &fe) {
			fe.Hint = kvHint
		}
	}
	st.loaded()
	return st, doc, nil
}

func (k *kvList) read(ctx context.Context, now time.Time, fn func(*listState) error) error {
	e, err := kvcas.Get(ctx, k.cfg.Conn, k.cfg.KV, k.cfg.Key)
	if err != nil {
		return fmt.Errorf("task list: %w", err)
	}
	st, _, err := k.parse(ctx, e, now)
	if err != nil {
		return err
	}
	return fn(st)
}

func (k *kvList) mutate(ctx context.Context, now time.Time, fn func(*listState) error) error {
	var sealed map[string]json.RawMessage // by the attempt that stored
	_, conflicts, err := kvcas.Update(ctx, k.cfg.Conn, k.cfg.KV, k.cfg.Key, func(e kvcas.Entry) ([]byte, bool, error) {
		sealed = map[string]json.RawMessage{}
		st, doc, err := k.parse(ctx, e, now)
		if err != nil {
			return nil, false, err
		}
		if err := fn(st); err != nil {
			return nil, false, err
		}
		if !st.dirty() {
			return nil, false, nil
		}
		doc.HighWaterMark = max(doc.HighWaterMark, st.newHWM)
		for id := range st.changed {
			t := st.tasks[id]
			if t == nil || st.removed[id] {
				continue
			}
			data, err := MarshalTask(*t)
			if err != nil {
				return nil, false, fmt.Errorf("task #%s: %w", id, err)
			}
			if k.cfg.Signer != nil {
				if data, err = k.cfg.Signer.Seal(ctx, id, data, doc.Tasks[id]); err != nil {
					return nil, false, fmt.Errorf("task #%s: %w", id, err)
				}
				sealed[id] = data
			}
			doc.Tasks[id] = data
		}
		for id := range st.removed {
			delete(doc.Tasks, id)
		}
		data, err := json.Marshal(doc)
		return data, true, err
	})
	if err == nil && k.cfg.Signer != nil {
		for id, entry := range sealed {
			k.cfg.Signer.Stored(id, entry)
		}
	}
	if conflicts > 0 && k.cfg.OnConflict != nil {
		k.cfg.OnConflict(conflicts)
	}
	if err != nil && !isListError(err) {
		return fmt.Errorf("task list: %w", err)
	}
	return err
}

// isListError reports errors of the list itself (bad input, a claimed or
// blocked task), which go back as they are.
func isListError(err error) bool {
	var fe *jsonfile.Error
	return errors.As(err, &fe) || errors.Is(err, ErrInvalidTask) || errors.Is(err, ErrTaskNotFound) ||
		errors.Is(err, ErrCycle) || errors.Is(err, ErrBlocked) || errors.Is(err, ErrClaimed) || errors.Is(err, ErrCompleted)
}

func (k *kvList) generation(ctx context.Context) (uint64, error) {
	e, err := kvcas.Get(ctx, k.cfg.Conn, k.cfg.KV, k.cfg.Key)
	if err != nil {
		return 0, fmt.Errorf("task list: %w", err)
	}
	return e.Revision, nil
}
