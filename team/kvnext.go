package team

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// newer reads the entries of member's key stored after revision after,
// oldest first, one JSON API request each ("next_by_subj"): a reader that
// has read the key before takes only what is new (its stamps and
// accepted status hold the rest), where a history read would make and
// drop a consumer on the server for each new revision, which on a loaded
// machine delayed every writer's puts. full is true when more than
// StatusHistory entries came (read the history instead). The time and
// sequence are the server's (the JSON API's answer, not the stored
// headers).
func (b *kvBoard) newer(ctx context.Context, member string, after uint64) (es []jetstream.KeyValueEntry, full bool, err error) {
	for seq := after + 1; ; {
		e, ok, err := b.msgGet(ctx, member, map[string]any{"seq": seq, "next_by_subj": "$KV." + b.kv.Bucket() + "." + member})
		if !ok || err != nil {
			return es, false, err
		}
		if e.rev < seq {
			return nil, false, fmt.Errorf("team %q: read the status of %s in bucket %s: the server answered revision %d when asked for one after %d", b.keys.team, member, b.kv.Bucket(), e.rev, seq-1)
		}
		es = append(es, e)
		if len(es) > StatusHistory {
			return nil, true, nil
		}
		seq = e.rev + 1
	}
}

// history reads member's whole history (a watch) and names the revision
// of its oldest entry when that is a put that rolled the key up (0 for
// none): a watch shows no headers, so the oldest entry's are asked of the
// JSON API — a rollup leaves its own entry the oldest of the key.
func (b *kvBoard) history(ctx context.Context, member string) ([]jetstream.KeyValueEntry, uint64, error) {
	hist, err := b.kv.History(ctx, member)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, err
	}
	if len(hist) == 0 {
		return nil, 0, nil
	}
	first, ok, err := b.msgGet(ctx, member, map[string]any{"seq": hist[0].Revision()})
	if err != nil || !ok || !rolledUp(first) {
		return hist, 0, err
	}
	return hist, first.rev, nil
}

// msgGet asks the status bucket's stream for one message (req: the JSON
// API's STREAM.MSG.GET request); ok is false for none.
func (b *kvBoard) msgGet(ctx context.Context, member string, req map[string]any) (storedEntry, bool, error) {
	fail := func(format string, args ...any) (storedEntry, bool, error) {
		return storedEntry{}, false, fmt.Errorf("team %q: read the status of %s in bucket %s: "+format, append([]any{b.keys.team, member, b.kv.Bucket()}, args...)...)
	}
	data, err := json.Marshal(req)
	if err != nil {
		return storedEntry{}, false, err
	}
	msg, err := b.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+b.kv.Bucket(), data)
	if err != nil {
		return fail("%w", err)
	}
	var resp struct {
		Message *struct {
			Seq  uint64    `json:"seq"`
			Time time.Time `json:"time"`
			Data []byte    `json:"data"`
			Hdrs []byte    `json:"hdrs"`
		} `json:"message"`
		Error *struct {
			Code        int    `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fail("the server's answer does not parse: %w", err)
	}
	switch {
	case resp.Error != nil && resp.Error.Code == 404:
		return storedEntry{}, false, nil
	case resp.Error != nil:
		return fail("%s", resp.Error.Description)
	case resp.Message == nil:
		return fail("the server's answer holds no message")
	}
	m := resp.Message
	op, rollup := kvOp(m.Hdrs)
	return storedEntry{b.kv.Bucket(), member, m.Data, m.Seq, m.Time, op, rollup}, true, nil
}

// kvOp is the key-value operation a stored entry's headers name, and
// whether they asked the server to roll the key up (drop every earlier
// entry of it, as a purge does, but with no marker when the entry is a
// put).
func kvOp(hdrs []byte) (op jetstream.KeyValueOp, rollup bool) {
	op = jetstream.KeyValuePut
	for _, line := range bytes.Split(hdrs, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		k, v = bytes.TrimSpace(k), bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte(jetstream.MsgRollup)):
			rollup = len(v) > 0
		case !bytes.EqualFold(k, []byte("KV-Operation")):
		case string(v) == "DEL":
			op = jetstream.KeyValueDelete
		case string(v) == "PURGE":
			op = jetstream.KeyValuePurge
		}
	}
	return op, rollup
}

// rolledUp reports whether e, read by newer, is a put that rolled its
// key up.
func rolledUp(e jetstream.KeyValueEntry) bool {
	se, ok := e.(storedEntry)
	return ok && se.rollup && se.op == jetstream.KeyValuePut
}

// storedEntry is an entry of the status bucket as the JSON API answered.
type storedEntry struct {
	bucket, key string
	value       []byte
	rev         uint64
	created     time.Time
	op          jetstream.KeyValueOp
	rollup      bool // its headers rolled the key up
}

func (e storedEntry) Bucket() string                  { return e.bucket }
func (e storedEntry) Key() string                     { return e.key }
func (e storedEntry) Value() []byte                   { return e.value }
func (e storedEntry) Revision() uint64                { return e.rev }
func (e storedEntry) Created() time.Time              { return e.created }
func (e storedEntry) Delta() uint64                   { return 0 }
func (e storedEntry) Operation() jetstream.KeyValueOp { return e.op }
