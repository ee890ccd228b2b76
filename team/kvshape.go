package team

import (
	"context"
	"fmt"
	"strings"
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
//   - any other setting a key-value bucket is not made with (its whole
//     shape is checked, as package jsmail checks its stream): limits on
//     the stream's messages, bytes or age, discarding old messages, a
//     seal, republishing, a subject transform, a mirror or sources, no
//     rollups, purges denied: put back where the server lets it and
//     reported once per stream and shape. A stream whose messages may go
//     with no marker (deletes allowed — the server lets no update deny
//     them again —, or limits that drop messages) is lossy: what this
//     read holds is dated as read after an erasure (scan's erasedAt),
//     since a beat hidden so and put back leaves nothing else to see.
//
// It returns the server's time when it answered (zero from a server that
// does not say), this clock's when the answer came, and whether the
// stream was lossy.
func (b *kvBoard) checkStream(ctx context.Context) (now, at time.Time, lossy bool, err error) {
	st, err := b.kv.Status(ctx)
	if err != nil {
		return now, at, lossy, fmt.Errorf("team %q: read the status bucket %s: %w", b.keys.team, b.kv.Bucket(), err)
	}
	at = b.now()
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return now, at, lossy, nil
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
	c := info.Config
	lossy = !c.DenyDelete || c.MaxMsgs > 0 || c.MaxBytes > 0 || c.MaxAge > 0 || c.Mirror != nil || len(c.Sources) > 0 || c.SubjectTransform != nil
	odd := shapeOf(c)
	if c.MaxMsgsPerSubject >= StatusHistory && odd == "" {
		return now, at, lossy, nil
	}
	cfg := c
	cfg.MaxMsgsPerSubject = max(cfg.MaxMsgsPerSubject, StatusHistory)
	cfg.MaxMsgs, cfg.MaxBytes, cfg.MaxAge, cfg.Discard = -1, -1, 0, jetstream.DiscardNew
	cfg.RePublish, cfg.SubjectTransform, cfg.AllowRollup = nil, nil, true
	// What no update changes (deletes allowed, purges denied, a seal, a
	// mirror): reported at each new shape, not tried at each read.
	what, uerr := "an update cannot put it back", error(nil)
	if c.MaxMsgsPerSubject != cfg.MaxMsgsPerSubject || c.MaxMsgs > 0 || c.MaxBytes > 0 || c.MaxAge > 0 || c.Discard != cfg.Discard ||
		c.RePublish != nil || c.SubjectTransform != nil || !c.AllowRollup {
		js, err := jetstream.New(b.nc)
		if err != nil {
			return now, at, lossy, err
		}
		_, uerr = js.UpdateStream(ctx, cfg)
		what = "what an update can change is put back"
		if uerr != nil {
			what = fmt.Sprintf("it could not be put back (%v)", uerr)
		}
	}
	if c.MaxMsgsPerSubject < StatusHistory {
		hist := fmt.Sprintf("put back to %d", StatusHistory)
		if uerr != nil {
			hist = fmt.Sprintf("could not be put back to %d (%v)", StatusHistory, uerr)
		}
		b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), "", uint64(b.now().UnixNano()), fmt.Sprintf(
			"team %q: the status bucket %s keeps %d entries per member, not %d (an older Cohort connected, or a client changed it): %s; until then junk put over a member's newest status hides it from a reader that reads later",
			b.keys.team, b.kv.Bucket(), c.MaxMsgsPerSubject, StatusHistory, hist))
	}
	if odd != "" {
		b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), "", uint64(info.Created.UnixNano()), fmt.Sprintf(
			"team %q: the status bucket %s's stream %s is not shaped as a key-value bucket is made (%s): a client of the server changed it or made it anew; members' statuses may be dropped or hidden with no trace (those this machine reads now are dated as after an erasure): %s; delete the bucket and open the team again to make it as it must be",
			b.keys.team, b.kv.Bucket(), c.Name, odd, what))
	}
	return now, at, lossy, nil
}

// shapeOf names what in c differs from how a key-value bucket's stream
// is made (beyond its history per key), "" for nothing.
func shapeOf(c jetstream.StreamConfig) string {
	var odd []string
	add := func(bad bool, what string) {
		if bad {
			odd = append(odd, what)
		}
	}
	add(!c.DenyDelete, "deletes of single messages allowed")
	add(c.DenyPurge, "purges denied")
	add(!c.AllowRollup, "rollups denied")
	add(c.MaxMsgs > 0, fmt.Sprintf("at most %d messages", c.MaxMsgs))
	add(c.MaxBytes > 0, fmt.Sprintf("at most %d bytes", c.MaxBytes))
	add(c.MaxAge > 0, fmt.Sprintf("messages dropped after %s", c.MaxAge))
	add(c.Discard != jetstream.DiscardNew, "old messages discarded at a limit")
	add(c.Sealed, "sealed")
	add(c.RePublish != nil, "republished")
	add(c.SubjectTransform != nil, "a subject transform")
	add(c.Mirror != nil || len(c.Sources) > 0, "a mirror or sources")
	add(c.NoAck, "no acks")
	return strings.Join(odd, ", ")
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
