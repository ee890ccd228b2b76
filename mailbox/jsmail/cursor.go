package jsmail

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// cursor is what an owner tells other processes of its reading, for
// Pending: every message of its inbox below floor was taken, and above
// more of them, in the stream made at created. It is a key per inbox in
// the team's cursor bucket, "FLOOR ABOVE CREATED-NS"; the owner's own
// record (seen.go) is what reading rests on.
type cursor struct {
	floor   uint64
	above   int
	created int64
}

// cursorOf reads agent's cursor; one missing, unreadable or of another
// stream counts from the start.
func cursorOf(ctx context.Context, kv jetstream.KeyValue, agent string, created time.Time) cursor {
	start := cursor{floor: 1, created: created.UnixNano()}
	e, err := kv.Get(ctx, agent)
	if err != nil {
		return start
	}
	f := strings.Fields(string(e.Value()))
	if len(f) != 3 {
		return start
	}
	floor, err1 := strconv.ParseUint(f[0], 10, 64)
	above, err2 := strconv.Atoi(f[1])
	at, err3 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || floor < 1 || above < 0 || at != start.created {
		return start
	}
	return cursor{floor: floor, above: above, created: at}
}

// publishCursor puts the owner's cursor in the team's bucket after its
// record changed. A failure only leaves Pending counting high until the
// next one: it is logged.
func (in *Inbox) publishCursor(ctx context.Context) {
	in.seenMu.Lock()
	v := fmt.Sprintf("%d %d %d", in.seen.floor, in.seen.above(), in.seen.stream)
	in.seenMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := in.t.cursors.Put(ctx, in.agent, []byte(v)); err != nil {
		in.t.cfg.Logger.Debug("mailbox: publishing the cursor", "agent", in.agent, "err", err)
	}
}
