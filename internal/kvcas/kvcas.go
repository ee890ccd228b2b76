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
//     failing. Whichever step the deadline ends, the error says how many
//     writes won meanwhile.
//   - A missing or deleted key reads as revision 0 and empty data; the
//     first write creates it (and loses, like an update, to a writer that
//     created it meanwhile).
//   - Reads go to the stream's leader (the stream message API), not the
//     key-value "direct get" that any replica may answer: a follower
//     still catching up after a node was lost would answer from behind,
//     and a machine would not see what another just wrote (a member just
//     added, a task just claimed). Writes are checked at the leader
//     either way; this makes a read after a write see it.
//   - The callback decides whether anything changed: nothing is written
//     when it says not, so reads through Update cost no revision.
package kvcas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
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

// Get reads key from its stream's leader over nc; a missing or deleted
// key is the zero Entry.
func Get(ctx context.Context, nc *nats.Conn, kv jetstream.KeyValue, key string) (Entry, error) {
	bucket := kv.Bucket()
	req, _ := json.Marshal(map[string]string{"last_by_subj": "$KV." + bucket + "." + key})
	resp, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return Entry{}, fmt.Errorf("%s key %s: %w", bucket, key, err)
	}
	var r struct {
		Message *struct {
			Seq  uint64 `json:"seq"`
			Hdrs []byte `json:"hdrs"`
			Data []byte `json:"data"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return Entry{}, fmt.Errorf("%s key %s: the server's answer does not parse: %w", bucket, key, err)
	}
	switch {
	case r.Error != nil && r.Error.ErrCode == int(jetstream.JSErrCodeMessageNotFound):
		return Entry{}, nil
	case r.Error != nil:
		return Entry{}, fmt.Errorf("%s key %s: %s (error %d)", bucket, key, r.Error.Description, r.Error.ErrCode)
	case r.Message == nil:
		return Entry{}, fmt.Errorf("%s key %s: the server answered without a message", bucket, key)
	}
	if op := string(r.Message.Hdrs); strings.Contains(op, "KV-Operation: DEL") || strings.Contains(op, "KV-Operation: PURGE") {
		return Entry{}, nil
	}
	data := r.Message.Data
	if data == nil {
		data = []byte{}
	}
	return Entry{Data: data, Revision: r.Message.Seq}, nil
}

// Update reads key, gives it to fn, and writes what fn returns if fn
// reports a change, only if no one wrote the key in between; otherwise it
// reads again and calls fn again. fn must not keep state across calls. It
// returns the revision written (or read, when nothing changed) and the
// number of lost compare-and-sets.
func Update(ctx context.Context, nc *nats.Conn, kv jetstream.KeyValue, key string, fn func(Entry) (data []byte, changed bool, err error)) (rev uint64, conflicts int, err error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	gaveUp := func(err error) error {
		if conflicts > 0 && ctx.Err() != nil {
			return fmt.Errorf("%s key %s: gave up after %d concurrent writes won: %w", kv.Bucket(), key, conflicts, ctx.Err())
		}
		return err
	}
	for {
		cur, err := Get(ctx, nc, kv, key)
		if err != nil {
			return 0, conflicts, gaveUp(err)
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
			return 0, conflicts, gaveUp(fmt.Errorf("%s key %s: %w", kv.Bucket(), key, err))
		}
		conflicts++
		pause := time.Duration(rand.Int64N(int64(min(conflicts, 50))*int64(time.Millisecond) + 1))
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return 0, conflicts, gaveUp(ctx.Err())
		}
	}
}
