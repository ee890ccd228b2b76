package team

import "time"

// Dating a member's status entries: what a verified entry of a signer key
// proves about when it was written (the rules in kvboard.go's comment),
// kept beside the board that scans the history.

// stamped is a verified entry of a signer key, as the history showed it.
type stamped struct {
	rev     uint64
	stamp   int64
	created int64 // the server's time of the entry, ns
	// lone: read after an erasure with no evidence of its write time but
	// its stamp (a put-back's store time is no evidence): its latency
	// (created − stamp) bounds nothing.
	lone bool
}

// erasureWindow is how long after an erasure, by a signer's stamp mapped
// onto the server's clock (its least latency), an entry of the erased key
// is still dated as one read after it: a banked original the erasure
// took is stamped before it, so a put-back read by a later read than the
// one that saw the erasure is dated by its stamp too. The window covers
// the spread of put latencies (an original put faster than any entry this
// reader has seen maps later than it was written) with room: a live
// member's beats inside it lose at most their own put latency.
const erasureWindow = 10 * time.Second

// observe records a verified entry of signer.
func (b *kvBoard) observe(signer string, o stamped) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.stamps[signer] {
		if p.rev == o.rev {
			return
		}
	}
	b.stamps[signer] = append(b.stamps[signer], o)
	if n := len(b.stamps[signer]); n > 4*StatusHistory {
		b.stamps[signer] = b.stamps[signer][n-2*StatusHistory:]
	}
}

// before reports whether signer signed stamp before cur was stored:
// signer's own clock says so (an entry of signer stored no later than cur
// is stamped as late or later), or, with no such evidence and another
// signer, the write times on the server's clock do. An entry stamped
// later than the server stored it proves its signer's clock was fast
// then (a machine resumed before NTP), not that what it stamped later
// came later: it is no evidence (fast).
func (b *kvBoard) before(signer string, stamp int64, cur acceptedStatus) bool {
	for _, o := range b.stamps[signer] {
		if o.rev <= cur.rev && o.stamp >= stamp && !o.fast() {
			return true
		}
	}
	if signer == cur.signer {
		return false
	}
	w, ok := b.written(signer, stamp, 0, true)
	return ok && w < cur.written
}

// fast reports whether o was stamped after the server stored it.
func (o stamped) fast() bool { return o.stamp > o.created }

// evidenced reports whether this reader has seen an entry of signer
// stored before rev whose latency is evidence (neither fast nor lone).
func (b *kvBoard) evidenced(signer string, rev uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range b.stamps[signer] {
		if o.rev < rev && o.evidence() {
			return true
		}
	}
	return false
}

// evidence reports whether o's latency bounds other entries' write times.
func (o stamped) evidence() bool { return !o.fast() && !o.lone }

// nearErasure reports whether signer's stamp, mapped onto the server's
// clock by the least latency of its entries (as is, with none), lies no
// later than erasureWindow after the erasure at erasedAt (0: none seen).
func (b *kvBoard) nearErasure(signer string, stamp, erasedAt int64) bool {
	if erasedAt == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	at := stamp
	first := true
	for _, o := range b.stamps[signer] {
		if o.evidence() && (first || stamp+o.created-o.stamp < at) {
			at, first = stamp+o.created-o.stamp, false
		}
	}
	return at <= erasedAt+int64(erasureWindow)
}

// written is when signer signed stamp, on the server's clock: no later
// than the time the first entry of signer stamped as late or later was
// stored (created, when not 0, is the entry's own), and with offset nor
// than the stamp plus the least (entry time − stamp) of signer's
// entries; fast entries are no evidence. ok is false when nothing bounds
// it. The offset bound is for what follows an erasure (where an original
// may be gone): on every beat it would count each put's own latency
// against its member, which on a loaded machine (seconds under -race)
// declared live members dead.
func (b *kvBoard) written(signer string, stamp, created int64, offset bool) (w int64, ok bool) {
	w, ok = created, created != 0
	for _, o := range b.stamps[signer] {
		if o.fast() {
			continue
		}
		if offset && !o.lone && (!ok || stamp+o.created-o.stamp < w) {
			w, ok = stamp+o.created-o.stamp, true
		}
		if o.stamp >= stamp && o.created < w {
			w = o.created
		}
	}
	return w, ok
}
