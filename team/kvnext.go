package team

import (
	"bytes"
	"context"
	"encoding/json"
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
	return storedEntry{b.kv.Bucket(), member, m.Data, m.Seq, m.Time, kvOp(m.Hdrs)}, true, nil
}

// kvOp is the key-value operation a stored entry's headers name.
func kvOp(hdrs []byte) jetstream.KeyValueOp {
	for _, line := range bytes.Split(hdrs, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok || !bytes.EqualFold(bytes.TrimSpace(k), []byte("KV-Operation")) {
			continue
		}
		switch string(bytes.TrimSpace(v)) {
		case "DEL":
			return jetstream.KeyValueDelete
		case "PURGE":
			return jetstream.KeyValuePurge
		}
	}
	return jetstream.KeyValuePut
}

// storedEntry is an entry of the status bucket as the JSON API answered.
type storedEntry struct {
	bucket, key string
	value       []byte
	rev         uint64
	created     time.Time
	op          jetstream.KeyValueOp
}

func (e storedEntry) Bucket() string                  { return e.bucket }
func (e storedEntry) Key() string                     { return e.key }
func (e storedEntry) Value() []byte                   { return e.value }
func (e storedEntry) Revision() uint64                { return e.rev }
func (e storedEntry) Created() time.Time              { return e.created }
func (e storedEntry) Delta() uint64                   { return 0 }
func (e storedEntry) Operation() jetstream.KeyValueOp { return e.op }
