package team

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StatusHistory is how many entries of each member's status the status
// bucket keeps (JetStream's most): the entries under the newest are the
// evidence a reader falls back on when the newest is junk or put back.
const StatusHistory = 64

// kvBoard is a status board in a key-value bucket. Any client of the
// server may write the bucket: hide an entry (put junk or a delete over
// it), keep it and put it back later, and the signers' clocks are not
// the reader's. So what the board takes as a member's current status and
// heartbeat rests on two things a writer of the bucket cannot forge:
// the signature (signedStatus: by the member it is about, with the key
// the lead granted it, or by the lead) and the server's own time of each
// entry, which a put-back entry gets anew while its signed stamp stays
// old.
//
//   - Each signer key's clock is tied to the server's by its offset: the
//     least (entry time − signed stamp) this reader has seen over that
//     key's entries. An entry's write time is its stamp plus that
//     offset, on the server's clock; its staleness is how much later
//     than that the server stored it (zero for a put as it happens, the
//     hold time for one put back).
//   - A member's current status is the verified entry with the latest
//     write time (the later revision on a tie); an entry stored after it
//     but written before is an old status put back: reported, passed
//     over. This orders a member's own statuses and the lead's marks
//     alike (the lead's "dead" outranks a heartbeat written before it),
//     and a respawned member's new key has its own offset, so a new
//     machine whose clock is behind the old one's is not refused.
//   - The heartbeat Get returns is when this reader first saw the entry,
//     less its staleness: a banked heartbeat put back after its member
//     died is as old as when it was written.
//   - A reader's first Get of a member reads the key's whole history
//     (StatusHistory entries), learning offsets from the entries as they
//     were put; and when the newest entry is junk, deleted or put back, it
//     looks under it for a newer verified one: a live member writes
//     again, and junk over each beat does not hide it.
//
// An entry that fails a check is reported (the store's Mailbox.OnProblem:
// the lead, on its machine) once per revision. Limits: a writer that puts
// more than StatusHistory entries over a member's key between two reads
// erases what lay under them (a live member then seems silent to that
// reader until its next beat, and a fresh reader whose first read finds
// only a put-back entry takes it, as it would a live one, with a
// heartbeat of when it saw it); a signer whose clock drifts against the
// server's by d over a run looks staler by d; an older Cohort connecting
// sets the bucket's history back to 1 (CreateOrUpdateKeyValue).
type kvBoard struct {
	kv   jetstream.KeyValue
	now  func() time.Time
	keys memberKeys

	mu       sync.Mutex
	accepted map[string]acceptedStatus // by member
	offset   map[string]int64          // by signer and key: least entry time − stamp, ns
	scanned  map[string]uint64         // by member: the newest revision scan read
	stamp    int64                     // the last stamp this process signed
}

// acceptedStatus is the status of a member this reader takes as current.
type acceptedStatus struct {
	rev     uint64
	written int64 // on the server's clock, ns
	data    []byte
	seen    time.Time
}

const statusContext = "cohort team status v1\n"

// signedStatus is a status as the status bucket holds it.
type signedStatus struct {
	Team   string          `json:"team"`
	Member string          `json:"member"`
	By     string          `json:"by"`
	Stamp  int64           `json:"stamp"` // the signer's clock, ns; one more at least at each put
	Status json.RawMessage `json:"status"`
	// Signature is By's, with its key in force (the lead's, or the grant).
	Signature string `json:"signature,omitempty"`
}

func (v signedStatus) unsigned() signedStatus { v.Signature = ""; return v }

func (b *kvBoard) Put(ctx context.Context, member string, data []byte) error {
	by, key := member, ed25519.PrivateKey(nil)
	if lead, ok := b.keys.leadPrivate(); ok {
		by, key = LeadName, lead
	} else {
		var err error
		if key, err = b.keys.PrivateKey(member); err != nil {
			return fmt.Errorf("team %q: sign %s's status: %w", b.keys.team, member, err)
		}
	}
	b.mu.Lock()
	b.stamp = max(b.stamp+1, b.now().UnixNano())
	v := signedStatus{Team: b.keys.team, Member: member, By: by, Stamp: b.stamp, Status: data}
	b.mu.Unlock()
	v.Signature = signValue(statusContext, v.unsigned(), key)
	env, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = b.kv.Put(ctx, member, env)
	return err
}

func (b *kvBoard) Get(ctx context.Context, member string) ([]byte, time.Time, bool, error) {
	b.mu.Lock()
	a, known := b.accepted[member]
	b.mu.Unlock()
	e, err := b.kv.Get(ctx, member)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, time.Time{}, false, err
	}
	if err == nil && known {
		if e.Revision() == a.rev {
			return a.data, a.seen, true, nil
		}
		v, signer, err := b.verify(member, e)
		if errors.As(err, new(netErr)) {
			return nil, time.Time{}, false, err
		}
		if err == nil && b.take(member, e, v, signer) {
			return b.fallback(member)
		}
	}
	if e == nil && !known {
		return nil, time.Time{}, false, nil // never published
	}
	b.mu.Lock()
	done := e != nil && e.Revision() <= b.scanned[member]
	b.mu.Unlock()
	if done { // junk left on top: what lies under it was read
		return b.fallback(member)
	}
	if err := b.scan(ctx, member); err != nil {
		return nil, time.Time{}, false, err
	}
	return b.fallback(member)
}

// verified is an entry of the history whose signature holds.
type verified struct {
	e      jetstream.KeyValueEntry
	v      signedStatus
	signer string
}

// scan reads member's history from the entry after the accepted one (all
// of it on a first read), learns every verified entry's offset, takes the
// one written last if it is newer than the accepted one, and reports the
// rest that fail: unsigned or forged, or stored after the one taken but
// written before it.
func (b *kvBoard) scan(ctx context.Context, member string) error {
	hist, err := b.kv.History(ctx, member)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	b.mu.Lock()
	from := b.accepted[member].rev
	b.scanned[member] = max(b.scanned[member], hist[len(hist)-1].Revision())
	b.mu.Unlock()
	var good []verified
	for _, e := range hist {
		if e.Revision() <= from || e.Operation() != jetstream.KeyValuePut {
			continue
		}
		v, signer, err := b.verify(member, e)
		if errors.As(err, new(netErr)) {
			return err
		}
		if err != nil {
			b.report(member, e.Revision(), err)
			continue
		}
		b.learn(signer, e, v)
		good = append(good, verified{e, v, signer})
	}
	var best *verified
	for i := range good {
		if best == nil || b.written(good[i].signer, good[i].v) >= b.written(best.signer, best.v) {
			best = &good[i]
		}
	}
	if best == nil {
		return nil
	}
	b.take(member, best.e, best.v, best.signer)
	for _, g := range good {
		if g.e.Revision() > best.e.Revision() {
			b.report(member, g.e.Revision(), errors.New("was written before a status stored under it: an old status put back"))
		}
	}
	return nil
}

// verify checks the signature of member's entry e and names its signer
// key.
func (b *kvBoard) verify(member string, e jetstream.KeyValueEntry) (signedStatus, string, error) {
	var v signedStatus
	if err := json.Unmarshal(e.Value(), &v); err != nil || v.Signature == "" {
		return v, "", errors.New("is not signed")
	}
	if v.Team != b.keys.team || v.Member != member || v.By != member && v.By != LeadName {
		return v, "", fmt.Errorf("is signed by %s for member %s of team %q: only the member itself or the lead may publish it", v.By, v.Member, v.Team)
	}
	pub, err := b.keys.publicKey(v.By)
	if err != nil {
		return v, "", err
	}
	if !verifyValue(statusContext, v.unsigned(), v.Signature, pub) {
		return v, "", fmt.Errorf("does not verify with the key of %s in force", v.By)
	}
	return v, v.By + "\x00" + hex.EncodeToString(pub), nil
}

// learn lowers signer's offset to e's if e's is less.
func (b *kvBoard) learn(signer string, e jetstream.KeyValueEntry, v signedStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	off := e.Created().UnixNano() - v.Stamp
	if o, ok := b.offset[signer]; !ok || off < o {
		b.offset[signer] = off
	}
}

// written is when v was signed, on the server's clock.
func (b *kvBoard) written(signer string, v signedStatus) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return v.Stamp + b.offset[signer]
}

// take makes member's verified entry e current if it was written after
// the accepted one, reporting it otherwise; it says whether it did.
func (b *kvBoard) take(member string, e jetstream.KeyValueEntry, v signedStatus, signer string) bool {
	b.learn(signer, e, v)
	b.mu.Lock()
	written := v.Stamp + b.offset[signer]
	a, known := b.accepted[member]
	if known && written <= a.written {
		b.mu.Unlock()
		b.report(member, e.Revision(), fmt.Errorf("was signed by %s %v before the status this machine holds: an old status put back",
			v.By, time.Duration(a.written-written)))
		return false
	}
	stale := time.Duration(e.Created().UnixNano() - written)
	b.accepted[member] = acceptedStatus{rev: e.Revision(), written: written, data: v.Status, seen: b.now().Add(-stale)}
	b.mu.Unlock()
	return true
}

func (b *kvBoard) report(member string, rev uint64, err error) {
	b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), member, rev, fmt.Sprintf("team %q: the status of %s (bucket %s key %s revision %d) %v: ignored; the last status this machine accepted stands (nats kv history %s %s shows who wrote it)",
		b.keys.team, member, b.kv.Bucket(), member, rev, err, b.kv.Bucket(), member))
}

// fallback is the status of member this reader takes as current.
func (b *kvBoard) fallback(member string) ([]byte, time.Time, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.accepted[member]
	if !ok {
		return nil, time.Time{}, false, nil
	}
	return a.data, a.seen, true, nil
}
