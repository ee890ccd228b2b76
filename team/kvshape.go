package team

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// checkStream reads the status bucket's stream as the server has it now
// and mends what a client of the server changed under the board:
//
//   - a stream deleted and made again (its creation time changed): the
//     revisions this board read belong to the old stream, and a new
//     entry's revision may be lower than any of them, so every member's
//     accepted status and every signer's stamps are kept but placed
//     before all of the new stream's entries (rebase); it is reported.
//   - fewer than StatusHistory entries kept per key (an older Cohort's
//     CreateOrUpdateKeyValue, or a raw UpdateStream): put back and
//     reported, so junk put over the next beats does not hide them.
//
// It returns the server's time when it answered (zero from a server that
// does not say) and this clock's when the answer came.
func (b *kvBoard) checkStream(ctx context.Context) (now, at time.Time, err error) {
	st, err := b.kv.Status(ctx)
	if err != nil {
		return now, at, fmt.Errorf("team %q: read the status bucket %s: %w", b.keys.team, b.kv.Bucket(), err)
	}
	at = b.now()
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return now, at, nil
	}
	info := bs.StreamInfo()
	now = info.TimeStamp
	b.mu.Lock()
	was := b.created
	b.created = info.Created
	remade := !was.IsZero() && !was.Equal(info.Created)
	if remade {
		b.rebase()
	}
	b.mu.Unlock()
	if remade {
		b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), "", uint64(info.Created.UnixNano()), fmt.Sprintf(
			"team %q: the status bucket %s was deleted and made again (stream %s created %s, was %s): every member's status stored before is gone; this machine keeps the statuses it had read and reads the new ones (whoever can delete it can also stop the team's statuses)",
			b.keys.team, b.kv.Bucket(), info.Config.Name, info.Created.UTC().Format(time.RFC3339Nano), was.UTC().Format(time.RFC3339Nano)))
	}
	if info.Config.MaxMsgsPerSubject >= StatusHistory {
		return now, at, nil
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		return now, at, err
	}
	cfg := info.Config
	was1 := cfg.MaxMsgsPerSubject
	cfg.MaxMsgsPerSubject = StatusHistory
	_, uerr := js.UpdateStream(ctx, cfg)
	what := fmt.Sprintf("put back to %d", StatusHistory)
	if uerr != nil {
		what = fmt.Sprintf("could not be put back to %d (%v)", StatusHistory, uerr)
	}
	b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), "", uint64(b.now().UnixNano()), fmt.Sprintf(
		"team %q: the status bucket %s keeps %d entries per member, not %d (an older Cohort connected, or a client changed it): %s; until then junk put over a member's newest status hides it from a reader that reads later",
		b.keys.team, b.kv.Bucket(), was1, StatusHistory, what))
	return now, at, nil
}

// rebase places what this board read of an earlier stream of the bucket
// before every entry of the current one: the accepted statuses keep
// their data, write times and ages, the stamps their evidence of order.
// b.mu is held.
func (b *kvBoard) rebase() {
	for m, a := range b.accepted {
		a.rev = 0
		b.accepted[m] = a
	}
	clear(b.scanned)
	clear(b.scannedAt)
	for s, os := range b.stamps {
		for i := range os {
			os[i].rev = 0
		}
		b.stamps[s] = os
	}
}
