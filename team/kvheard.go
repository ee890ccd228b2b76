package team

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// heardStatus is a verified status of a member as this board heard it
// published (listen).
type heardStatus struct {
	signer string // as acceptedStatus.signer
	stamp  int64
	data   []byte
	at     time.Time // on this clock, when heard
}

// listen subscribes the board to what is published on the bucket's
// subjects (core NATS, beside the stream): the server hands every
// publication to each subscriber as it routes it, so no later change to
// the stream — its history set back to one entry per key and junk put
// over each beat, a purge — takes back a beat this board has heard. A
// watch of the stream (a consumer) would not do: it loads each entry
// from the stream after it is stored, and an entry trimmed before that
// is skipped (a flood of junk over a key kept to one entry: about one
// beat in five lost on this machine under -race).
func (b *kvBoard) listen() error {
	prefix := "$KV." + b.kv.Bucket() + "."
	sub, err := b.nc.Subscribe(prefix+">", func(m *nats.Msg) { b.hear(strings.TrimPrefix(m.Subject, prefix), m.Data) })
	if err != nil {
		return fmt.Errorf("team %q: listen to the status bucket %s: %w", b.keys.team, b.kv.Bucket(), err)
	}
	if err := b.nc.FlushTimeout(netTimeout); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("team %q: listen to the status bucket %s: %w", b.keys.team, b.kv.Bucket(), err)
	}
	b.sub = sub
	return nil
}

// hear keeps a status of member published now if it is signed by the
// key of the status accepted for member, stamped later than that one and
// than any heard before: only such a status can change what Get answers
// (heardSince), and its check needs no read (the key is the accepted
// status's, checked when it was accepted), where a check of every signer
// would read the team file and the key grants for each publication.
// What fails is left to the reads of the stream, which report it with
// its revision.
func (b *kvBoard) hear(member string, data []byte) {
	at := b.now()
	var v signedStatus
	if err := json.Unmarshal(data, &v); err != nil || v.Signature == "" || v.Team != b.keys.team || v.Member != member {
		return
	}
	b.mu.Lock()
	a, ok := b.accepted[member]
	h := b.heard[member]
	b.mu.Unlock()
	if !ok || v.Stamp <= a.stamp || h.signer == a.signer && v.Stamp <= h.stamp {
		return
	}
	by, hexKey, _ := strings.Cut(a.signer, "\x00")
	pub, err := hex.DecodeString(hexKey)
	if err != nil || v.By != by || len(pub) != ed25519.PublicKeySize || !verifyValue(statusContext, v.unsigned(), v.Signature, pub) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heard == nil {
		b.heard = map[string]heardStatus{}
	}
	if h := b.heard[member]; h.signer != a.signer || v.Stamp > h.stamp {
		b.heard[member] = heardStatus{signer: a.signer, stamp: v.Stamp, data: v.Status, at: at}
	}
}

// heardSince is the status of member heard from a's signer key later by
// its stamp than a, and when it was written on this clock: no later than
// when it was heard, nor than its stamp (an entry banked by a client of
// the server and published again later is as old as its signer's clock
// says, as a lone entry of the stream is: scan), nor than its write time
// on the server's clock as the stored entries of its signer key bound it
// (written). ok is false when there is none. b.mu is held.
func (b *kvBoard) heardSince(member string, a acceptedStatus) (data []byte, seen time.Time, ok bool) {
	h, found := b.heard[member]
	if !found || h.signer != a.signer || h.stamp <= a.stamp {
		return nil, seen, false
	}
	seen = h.at
	if t := time.Unix(0, h.stamp); t.Before(seen) {
		seen = t
	}
	if w, bounded := b.written(a.signer, h.stamp, 0, true); bounded && !b.srvNow.IsZero() {
		if t := b.srvAt.Add(-time.Duration(b.srvNow.UnixNano() - w)); t.Before(seen) {
			seen = t
		}
	}
	return h.data, seen, true
}

// reportDropped reports statuses the listening subscription dropped
// since the last report (the subscriber fell behind a flood of
// publications: what it dropped is only in the stream, where junk may
// cover it).
func (b *kvBoard) reportDropped() {
	if b.sub == nil {
		return
	}
	n, err := b.sub.Dropped()
	if err != nil { // the connection closed
		return
	}
	b.mu.Lock()
	more := n > b.dropped
	if more {
		b.dropped = n
	}
	b.mu.Unlock()
	if more {
		b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), "", uint64(n), fmt.Sprintf(
			"team %q: %d publications on the status bucket %s were dropped by this machine, which could not keep up (a flood of them?): a member's heartbeats among them count only if the bucket still holds them",
			b.keys.team, n, b.kv.Bucket()))
	}
}
