// Package kvcas is read-modify-write of one JetStream key-value entry by
// compare-and-set: the way Cohort keeps a document (a team's task list,
// its team file) that processes on several machines change at once.
//
// # Decisions the spec leaves open
//
//   - A lost compare-and-set (another writer got there first) is retried
//     from a fresh read, after a short random pause that grows with the
//     attempts (up to 50 ms), until the context ends or Timeout passes —
//     never a fixed number of times, so a busy list slows down rather than
//     failing.
//   - A missing or deleted key reads as revision 0 and empty data; the
//     first write creates it (and loses, like an update, to a writer that
//     created it meanwhile).
//   - The callback decides whether anything changed: nothing is written
//     when it says not, so reads through Update cost no revision.
package kvcas

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Timeout bounds an Update whose context has no earlier deadline.
const Timeout = 30 * time.Second

// Entry is the entry as read: its data (nil when missing) and revision (0
// when missing).
type Entry struct {
	Data     []byte
	Revision uint64
}

// Get reads key; a missing or deleted key is the zero Entry.
func Get(ctx context.Context, kv jetstream.KeyValue, key string) (Entry, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return Entry{}, nil
	}
	if err != nil {
		return Entry{}, fmt.Errorf("%s key %s: %w", kv.Bucket(), key, err)
	}
	return Entry{Data: e.Value(), Revision: e.Revision()}, nil
}

// Update reads key, gives it to fn, and writes what fn returns if fn
// reports a change, only if no one wrote the key in between; otherwise it
// reads again and calls fn again. fn must not keep state across calls. It
// returns the revision written (or read, when nothing changed) and the
// number of lost compare-and-sets.
func Update(ctx context.Context, kv jetstream.KeyValue, key string, fn func(Entry) (data []byte, changed bool, err error)) (rev uint64, conflicts int, err error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	for {
		cur, err := Get(ctx, kv, key)
		if err != nil {
			return 0, conflicts, err
		}
		data, changed, err := fn(cur)
		if err != nil || !changed {
			return cur.Revision, conflicts, err
		}
		if cur.Revision == 0 {
			rev, err = kv.Create(ctx, key, data)
		} else {
			rev, err = kv.Update(ctx, key, data, cur.Revision)
		}
		if err == nil {
			return rev, conflicts, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, conflicts, fmt.Errorf("%s key %s: %w", kv.Bucket(), key, err)
		}
		conflicts++
		pause := time.Duration(rand.Int64N(int64(min(conflicts, 50))*int64(time.Millisecond) + 1))
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, conflicts, fmt.Errorf("%s key %s: gave up after %d concurrent writes won: %w", kv.Bucket(), key, conflicts, ctx.Err())
		}
	}
}
