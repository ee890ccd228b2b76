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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StatusHistory is how many entries of each member's status the status
// bucket keeps (JetStream's most): the entries under the newest are the
// evidence a reader falls back on when the newest is junk or put back.
const StatusHistory = 64

// kvBoard is a status board in a key-value bucket. Any client of the
// server may write the bucket: hide an entry (put junk or a delete over
// it), keep it and put it back later; and the signers' clocks are not
// the reader's. So what the board takes as a member's current status and
// heartbeat rests only on what such a writer cannot forge: the signature
// (signedStatus: by the member it is about, with the key the lead
// granted it, or by the lead), the signer's own stamps (one clock per
// signer key), and the server's sequence and time of each entry as a
// watch of the key delivers them (a direct get answers with headers a
// writer may have stored first, so none is read from there).
//
//   - Order: an entry was written before entry c was stored when an
//     entry of the same signer key stored no later than c is stamped as
//     late or later (its own original, or a later beat, lies there). Such
//     an entry stored after the current status is an old one put back:
//     reported, passed over. Otherwise the entry stored last is current —
//     a member's own statuses and the lead's marks in one order (the
//     lead's "dead" outranks a heartbeat of the member's written before
//     it), and a respawned member's new key has its own stamps, so a new
//     machine whose clock is behind the old one's is not refused. With no
//     such evidence (another signer, the original gone) the write times
//     below decide.
//   - Write time, on the server's clock: no later than the time the
//     first entry of its signer key stamped as late or later was stored,
//     and, for an entry read after an erasure (a purge, a delete, junk,
//     more new entries than the bucket keeps), nor than its stamp plus
//     the least (entry time − stamp) of its key.
//   - Heartbeat: the age of the current entry is measured from its write
//     time to the server's time read after the key's history (the
//     stream's info), then on this reader's clock from when that answer
//     came; so neither a slow read nor the time since an entry was put
//     back is lost. A heartbeat hidden and put back after its member died
//     is as old as when it was written; junk put over a live member's
//     beats only makes ages more exact.
//   - A reader's first read of a member's key reads the key's history
//     (StatusHistory entries), later ones what was stored since: a fresh
//     reader (a machine spawned later, a resumed lead, a team made again
//     with the same lead key) sees the entries as they were stored, so an old "stopped" or
//     "working" put back loses to the later one beneath it, and a live
//     member's beat under junk or a delete is found.
//
// An entry stored above the current status that fails a check is
// reported (the store's Mailbox.OnProblem: the lead, on its machine) once
// per revision; what lies under it (a respawn's earlier key) is history.
//
// What a writer may do to the history itself (keyattack5):
//
//   - Erase it (one purge, a delete, more than StatusHistory junk puts)
//     and put a banked entry back: to a reader that has seen entries of
//     its signer key, the stamps above still date it. To one that has not
//     (a resumed lead, a machine spawned later) it is a lone entry above
//     erased history, dated no later than its own stamp: a dead member's
//     last beat is as old as its member's clock says, not as new as its
//     put-back. The reader remembers the erasure (its server time) across
//     reads: an entry put back by a later read, with nothing erased since,
//     is dated so too while its stamp lies within erasureWindow of the
//     erasure. A lone entry's latency (its put-back) is no evidence for
//     the next one: two banked beats put back are both as old as their
//     stamps. A live member's beats are dated so until they are stamped
//     past the window (after which their store time has evidence again).
//   - Erase it with a put that rolls the key up (a Nats-Rollup header:
//     the server drops every earlier entry and leaves no marker): the
//     put counts as an erasure under its own entry, read from its headers
//     (the JSON API's; a full read asks for the oldest entry's, which a
//     rollup leaves the oldest), and is reported.
//   - Put the lead's status of an earlier team of the same name back: a
//     lead-signed entry stamped before the team was made (its file's
//     createdAt as the lead signed it in its terms, on the same clock) is
//     refused.
//   - Delete the stream and make it again: the revisions read before
//     belong to the old stream, so a revision lower than the accepted one,
//     or the last one read stored at another time, makes the reader read
//     the stream's creation time; a new one is reported, and what was read
//     is placed before every entry of the new stream (its statuses and
//     ages stand, its stamps still date put-back entries).
//   - Set the bucket back to fewer entries per key (what an older Cohort's
//     open does, or a raw UpdateStream: the server takes that change; it
//     refuses to lift DenyDelete or DenyPurge, not to lower
//     MaxMsgsPerSubject) and cover each beat with junk: each read of a new
//     revision reads the stream's shape, puts StatusHistory back and
//     reports it; the beats covered before that read were heard as they
//     were published (kvheard.go: the board subscribes to the bucket's
//     subjects while it is open) and date a status of the same signer key
//     stamped later than the one accepted, no later than when heard, than
//     its stamp, and than its stored entries bound it.
//
// Clocks: an entry stamped later than the server stored it proves its
// signer's clock was fast then (a machine resumed before NTP stepped it
// back), not that what it stamps later came later, so it bounds nothing;
// a signer whose clock runs ahead of the server's loses the put-back
// bounds of those entries.
//
// Limits: a beat published while no board of the reader was open, or
// dropped by a board that fell behind a flood of publications (reported),
// and covered by junk in a bucket set back to one entry per key before
// the reader's next read is gone; a heard beat extends only a status
// already accepted from the stream (a status of another signer key, the
// lead's "dead" mark included, is never overridden by what was heard); a
// signer whose clock runs ahead by d may have a beat banked and
// published again within d taken as heard then; a purge at the stream
// level (no marker left) before a fresh reader's first read looks like a
// key's first entry, dated when stored. On a lossy status stream
// (kvshape.go: deletes allowed, limits; reported) every entry is dated
// as read after an erasure: a live member's beats lose their own put
// latency, and with no earlier evidence of its key are as old as their
// stamps. A lone entry above an erasure in the same read is no status
// to a reader that has accepted none of the member (the same lead's
// earlier session's "stopped" put back over a purge would stop a
// teammate spawned then): such a reader sees the member as it would
// after the erasure alone, until a read with no erasure in it (a live
// member's next beat, dated by its stamp).
type kvBoard struct {
	kv   jetstream.KeyValue
	nc   *nats.Conn
	now  func() time.Time
	keys memberKeys

	mu        sync.Mutex
	accepted  map[string]acceptedStatus // by member
	stamps    map[string][]stamped      // by signer and key: its verified entries seen
	scanned   map[string]uint64         // by member: the newest revision scan read
	scannedAt map[string]time.Time      // by member: when that revision was stored
	erasedAt  map[string]int64          // by member: the server's time of the newest erasure seen, ns
	created   time.Time                 // when the bucket's stream was made, as last read
	teamMade  time.Time                 // the team's creation (its file's createdAt), once read
	madeRead  bool
	stamp     int64 // the last stamp this process signed

	sub     *nats.Subscription     // listen's
	heard   map[string]heardStatus // by member
	dropped int                    // publications sub dropped, as last reported
	srvNow  time.Time              // the server's time, as the last read said
	srvAt   time.Time              // this clock's when that answer came
}

// acceptedStatus is the status of a member this reader takes as current.
type acceptedStatus struct {
	rev     uint64
	signer  string
	stamp   int64
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
	rev, at, err := b.lastRevision(ctx, member)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	b.mu.Lock()
	a, known := b.accepted[member]
	// A revision below the accepted one, or the one read last stored at
	// another time: the bucket's stream was made again (scan's
	// checkStream finds out).
	odd := known && rev < a.rev || rev == b.scanned[member] && !at.Equal(b.scannedAt[member])
	done := rev <= b.scanned[member] && !odd
	b.mu.Unlock()
	if !done {
		if err := b.scan(ctx, member, odd); err != nil {
			return nil, time.Time{}, false, err
		}
	}
	b.reportDropped()
	return b.fallback(member)
}

// lastRevision is the revision of the newest entry of member's key (0
// for none) and when it was stored, asked of the stream's JSON API: a
// direct get answers with the headers the message was stored with first,
// so a writer could put its own sequence there.
func (b *kvBoard) lastRevision(ctx context.Context, member string) (uint64, time.Time, error) {
	e, ok, err := b.msgGet(ctx, member, map[string]any{"last_by_subj": "$KV." + b.kv.Bucket() + "." + member})
	if !ok || err != nil {
		return 0, time.Time{}, err
	}
	return e.rev, e.created, nil
}

// verified is an entry of the history whose signature holds.
type verified struct {
	e      jetstream.KeyValueEntry
	v      signedStatus
	signer string
	// lone: what lies under it in the history was erased (a purge, a
	// delete, junk) and this reader knows no earlier entry of its signer
	// key that is evidence (stamped.lone): no evidence of when it was
	// written but its own stamp.
	lone bool
	// erased: something was erased before it (see scan), in this read or
	// within erasureWindow of it by its stamp; its write time is bounded
	// by its stamp and its key's least latency too.
	erased bool
	// unknown: lone above an erasure this read saw (a marker, junk, an
	// overflow): to a reader that has accepted no status of the member it
	// is no status at all, as if the erasure had left nothing.
	unknown bool
}

// scan reads member's history (a watch: the server's own sequence and
// time of each entry, which no writer sets) the first time, after a
// stream looked remade (odd), or past StatusHistory new entries, and
// otherwise only the entries after the last it read (newer), records every verified
// entry's signer stamp, and takes as current the entry stored last that
// was not written before the current one; it reports what fails:
// unsigned or forged entries, and entries stored after the current one
// but written before it (an old status put back).
func (b *kvBoard) scan(ctx context.Context, member string, odd bool) error {
	b.mu.Lock()
	after := b.scanned[member]
	b.mu.Unlock()
	var hist []jetstream.KeyValueEntry
	full, overflow := odd || after == 0, false
	if !full {
		var err error
		if hist, overflow, err = b.newer(ctx, member, after); err != nil {
			return err
		}
		full = overflow
	}
	var rolled uint64 // a put that rolled the key up, read in full
	if full {
		var err error
		if hist, rolled, err = b.history(ctx, member); err != nil {
			return err
		}
	}
	// The stream is read after the history: its server time (now) is no
	// earlier than any entry read, and a heartbeat's age is measured to
	// it, then on this clock from when the answer came (at). Measured on
	// this clock from when the reader asked, the read's own time (seconds
	// on a loaded machine) aged a live member, declared dead while
	// beating; measured from the newest entry, a put-back entry's age
	// lacked the time since it was put back.
	now, at, lossy, err := b.checkStream(ctx)
	if err != nil {
		return err
	}
	if len(hist) == 0 {
		return nil
	}
	if now.IsZero() { // a server that does not say its time
		now, at = hist[len(hist)-1].Created(), b.now()
	}
	b.mu.Lock()
	b.srvNow, b.srvAt = now, at
	b.mu.Unlock()
	type refusal struct {
		rev uint64
		err error
	}
	var good []verified
	var refused []refusal
	var markers []uint64 // purges and deletes read first now
	made := b.madeAt()
	keys := signerKeys{}
	// erased: an entry below that is no status (a delete, a purge, junk),
	// or more entries since the last read than the bucket keeps, or a
	// stream that looked remade: an original may be gone from under what
	// follows.
	erased := overflow || odd && after != 0
	// erasedAt: the newest erasure this reader has seen of the key, in any
	// read: a beat banked and erased, the marker read, and the beat put
	// back later with nothing erased since is as old as its stamp says.
	b.mu.Lock()
	erasedAt := b.erasedAt[member]
	b.mu.Unlock()
	if erased || lossy {
		erasedAt = max(erasedAt, now.UnixNano())
	}
	var rollups []uint64 // puts read first now that rolled the key up
	for _, e := range hist {
		if put := e.Operation() == jetstream.KeyValuePut; !put || rolledUp(e) || e.Revision() == rolled {
			// A rollup put erases what lay under it as a purge does, but
			// leaves no marker: it counts as one, before its own entry.
			erased = true
			erasedAt = max(erasedAt, e.Created().UnixNano())
			if e.Revision() > after && !put {
				markers = append(markers, e.Revision())
			} else if e.Revision() > after {
				rollups = append(rollups, e.Revision())
			}
			if !put {
				continue
			}
		}
		v, signer, err := b.verify(member, e, keys)
		if errors.As(err, new(netErr)) {
			return err
		}
		if err == nil && v.By == LeadName && !made.IsZero() && v.Stamp < made.UnixNano() {
			err = fmt.Errorf("was signed by the lead at %s, before team %q was made (%s): a status of an earlier team of that name", time.Unix(0, v.Stamp).UTC().Format(time.RFC3339Nano), b.keys.team, made.UTC().Format(time.RFC3339Nano))
		}
		if err != nil {
			erased = true
			erasedAt = max(erasedAt, e.Created().UnixNano())
			refused = append(refused, refusal{e.Revision(), err})
			continue
		}
		near := erased || b.nearErasure(signer, v.Stamp, erasedAt)
		lone := near && !b.evidenced(signer, e.Revision())
		b.observe(signer, stamped{e.Revision(), v.Stamp, e.Created().UnixNano(), lone})
		good = append(good, verified{e, v, signer, lone, near, lone && erased})
	}
	b.mu.Lock()
	b.erasedAt[member] = erasedAt
	if last := hist[len(hist)-1]; last.Revision() >= b.scanned[member] {
		b.scanned[member], b.scannedAt[member] = last.Revision(), last.Created()
	}
	cur, known := b.accepted[member]
	for _, g := range good {
		if known && g.e.Revision() <= cur.rev {
			continue
		}
		if known && b.before(g.signer, g.v.Stamp, cur) {
			refused = append(refused, refusal{g.e.Revision(), fmt.Errorf("was signed by %s before the status stored at revision %d: an old status put back", g.v.By, cur.rev)})
			continue
		}
		if !known && g.unknown {
			// An earlier session's "stopped" put back over a purge would
			// stop a teammate spawned now while its lead works; a dead
			// member's beat put back so, keep it alive. The next read,
			// with no erasure in it, dates what follows by its stamp.
			continue
		}
		written, _ := b.written(g.signer, g.v.Stamp, g.e.Created().UnixNano(), g.erased)
		if g.lone {
			written = min(written, g.v.Stamp)
		}
		cur, known = acceptedStatus{rev: g.e.Revision(), signer: g.signer, stamp: g.v.Stamp, written: written, data: g.v.Status,
			seen: at.Add(-time.Duration(now.UnixNano() - written))}, true
	}
	if known {
		b.accepted[member] = cur
	}
	b.mu.Unlock()
	for _, r := range refused {
		if r.rev > cur.rev { // what lies under the current status is history (a respawn's earlier key, junk covered since)
			b.report(member, r.rev, r.err)
		}
	}
	// No Cohort deletes or purges a status: a marker is a client of the
	// server erasing one (banked, to put back later, or to age a live
	// member as silent).
	for _, rev := range markers {
		b.report(member, rev, errors.New("is a delete or purge of the statuses before it, which no Cohort does: a client of the server erased them (what it put back later is dated by its signer's stamps)"))
	}
	for _, rev := range rollups {
		b.report(member, rev, errors.New("is a put that rolled the key up (a Nats-Rollup header), which no Cohort does: a client of the server erased the statuses before it, with no marker; it is dated as read after an erasure"))
	}
	return nil
}

// signerKeys are the keys in force of the signers one scan met, by name
// (or why there is none): a signer's key is looked up once per scan — a
// read of the team file and, for a member, of its key grant on the
// server — not once per entry. A fresh reader's first read of a key
// verifies up to StatusHistory entries: a lookup for each took seconds
// on a loaded machine, and as the age of what it read runs from the
// server's time read before them, a live lead's heartbeat came out
// seconds old and its teammates on other machines stopped.
type signerKeys map[string]signerKey

type signerKey struct {
	pub ed25519.PublicKey
	err error
}

// verify checks the signature of member's entry e and names its signer
// key; keys holds the keys this scan looked up.
func (b *kvBoard) verify(member string, e jetstream.KeyValueEntry, keys signerKeys) (signedStatus, string, error) {
	var v signedStatus
	if err := json.Unmarshal(e.Value(), &v); err != nil || v.Signature == "" {
		return v, "", errors.New("is not signed")
	}
	if v.Team != b.keys.team || v.Member != member || v.By != member && v.By != LeadName {
		return v, "", fmt.Errorf("is signed by %s for member %s of team %q: only the member itself or the lead may publish it", v.By, v.Member, v.Team)
	}
	k, ok := keys[v.By]
	if !ok {
		k.pub, k.err = b.keys.publicKey(v.By)
		keys[v.By] = k
	}
	if k.err != nil {
		return v, "", k.err
	}
	pub := k.pub
	if !verifyValue(statusContext, v.unsigned(), v.Signature, pub) {
		return v, "", fmt.Errorf("does not verify with the key of %s in force", v.By)
	}
	return v, v.By + "\x00" + hex.EncodeToString(pub), nil
}

// madeAt is when the team was made (its createdAt as the lead's signed
// terms say, read through Store.read; on the lead's
// clock, which also stamps the lead's statuses), read once; zero when
// unknown.
func (b *kvBoard) madeAt() time.Time {
	b.mu.Lock()
	made, read := b.teamMade, b.madeRead
	b.mu.Unlock()
	if read {
		return made
	}
	cfg, err := b.keys.s.read(b.keys.team)
	if err != nil {
		return time.Time{}
	}
	b.mu.Lock()
	b.teamMade, b.madeRead = cfg.CreatedAt, true
	b.mu.Unlock()
	return cfg.CreatedAt
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
	if data, seen, ok := b.heardSince(member, a); ok && seen.After(a.seen) {
		return data, seen, true, nil
	}
	return a.data, a.seen, true, nil
}
