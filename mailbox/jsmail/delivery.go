package jsmail

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// drain reads the inbox's messages from the cursor on, in stream order
// (the server's next messages on the inbox's subject from a sequence: no
// consumer, so nothing another client does with consumers moves them),
// until none is left or readAhead wait to be returned. Messages to be
// tried again come first when their time has.
func (in *Inbox) drain(ctx context.Context) {
	in.retryDue(ctx)
	for ctx.Err() == nil {
		in.mu.Lock()
		stop := in.closed || in.failed != nil || len(in.queue) >= readAhead
		next, room := in.next, readAhead-len(in.queue)
		in.mu.Unlock()
		if stop {
			return
		}
		batch, err := in.readBatch(ctx, next, room)
		if err != nil {
			in.t.cfg.Logger.Debug("mailbox: reading a batch", "agent", in.agent, "seq", next, "err", err)
		}
		if len(batch) == 0 && (err != nil || in.t.cfg.Replicas > 1) {
			// A direct get that failed (someone turned it off), or one
			// that found nothing and may have been answered by a replica
			// behind the leader: the leader's own get says what is next.
			raw, ok := in.readOne(ctx, next)
			if !ok {
				return
			}
			batch = append(batch, raw)
		}
		if len(batch) == 0 {
			return
		}
		for _, raw := range batch {
			// The cursor moves past it once it is queued or taken: until
			// then the floor (floorLocked) stays at or below it.
			in.take(raw)
			in.mu.Lock()
			in.next = raw.Sequence + 1
			in.mu.Unlock()
		}
		// Dead letters and repeats move the cursor with no Ack to
		// publish it: without this, Pending counted them as unread until
		// the owner's next Ack, and a lead waiting for an idle member's
		// inbox to empty waited for ever (TestTeamAcrossMachines'
		// forgeries).
		in.seenMu.Lock()
		publish := in.unpublished
		in.unpublished = false
		in.seenMu.Unlock()
		if publish {
			in.publishCursor(ctx)
		}
	}
}

// readOne reads the inbox's next message from sequence next on through
// the stream leader's message get.
func (in *Inbox) readOne(ctx context.Context, next uint64) (*jetstream.RawStreamMsg, bool) {
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	raw, err := in.t.stream.GetMsg(gctx, next, jetstream.WithGetMsgSubject(in.t.inbox(in.agent)))
	cancel()
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		// The check (every CheckInterval) finds a stream gone or
		// changed; this read is tried again then.
		in.t.cfg.Logger.Debug("mailbox: reading the inbox", "agent", in.agent, "seq", next, "err", err)
	}
	return raw, err == nil
}

// take checks a message read from the stream, dead-letters what cannot
// be read, drops repeats and queues the rest for the owner.
func (in *Inbox) take(raw *jetstream.RawStreamMsg) {
	seq := raw.Sequence
	in.seenMu.Lock()
	taken := in.seen.taken(seq)
	in.seenMu.Unlock()
	if taken { // before the inbox was opened again
		in.mu.Lock()
		delete(in.later, seq)
		in.mu.Unlock()
		return
	}
	m, err := in.t.open(raw, in.agent)
	if errors.Is(err, ErrKeyUnavailable) {
		in.putLater(raw, err)
		return
	}
	if err != nil {
		if !in.t.refuse(raw, in.agent, err) {
			in.putLater(raw, nil)
			return
		}
		in.done(seq)
		return
	}
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return // read again by the next consumer
	}
	_, held := in.held[m.ID]
	if held || in.recent.has(m.ID) {
		// A re-send past the server's duplicate window, or a replay.
		in.mu.Unlock()
		in.done(seq)
		return
	}
	in.seenMu.Lock()
	seen := in.seen.has(m.ID)
	in.seenMu.Unlock()
	if seen {
		// Acknowledged before, by this owner (on this machine), perhaps
		// before a restart: a replay the server forgot (a stream made
		// anew, a server restart).
		in.mu.Unlock()
		in.done(seq)
		in.t.cfg.Logger.Debug("mailbox: an acknowledged id came again, dropped", "agent", in.agent, "id", m.ID)
		return
	}
	sent, _ := time.Parse(time.RFC3339Nano, raw.Header.Get(HeaderSent))
	if len(in.queue) == 0 {
		close(in.ready)
	}
	in.queue = append(in.queue, m)
	in.held[m.ID] = heldMsg{seq: seq, sent: sent, stored: raw.Time}
	delete(in.later, seq)
	in.mu.Unlock()
}

// done records that the message at seq was taken without reaching the
// owner (dead-lettered, or dropped as a repeat), so that an inbox opened
// again does not read it again.
func (in *Inbox) done(seq uint64) {
	in.mu.Lock()
	floor := in.floorLocked(map[uint64]bool{seq: true})
	in.mu.Unlock()
	in.seenMu.Lock()
	err := in.seen.add(nil, nil, []uint64{seq}, floor)
	in.unpublished = in.unpublished || err == nil
	in.seenMu.Unlock()
	in.mu.Lock()
	delete(in.later, seq)
	in.mu.Unlock()
	if err != nil {
		// It is read again by an inbox opened anew, and dropped or
		// dead-lettered again.
		in.t.cfg.Logger.Debug("mailbox: recording a message taken", "agent", in.agent, "seq", seq, "err", err)
	}
}

// floorLocked is the cursor's floor: the lowest sequence read and not
// taken (except: being taken now), or the next to read. in.mu is held.
func (in *Inbox) floorLocked(except map[uint64]bool) uint64 {
	floor := in.next
	for _, h := range in.held {
		if h.seq > 0 && h.seq < floor && !except[h.seq] {
			floor = h.seq
		}
	}
	for seq := range in.later {
		if seq < floor && !except[seq] {
			floor = seq
		}
	}
	return floor
}

// putLater keeps a message read but not taken to be tried again after
// keyRetry. A key that could not be read is reported the first time only
// (an outage would otherwise report every message every second).
func (in *Inbox) putLater(raw *jetstream.RawStreamMsg, why error) {
	in.mu.Lock()
	l, ok := in.later[raw.Sequence]
	if !ok {
		l = &laterMsg{raw: raw}
		in.later[raw.Sequence] = l
	}
	l.at = time.Now().Add(keyRetry)
	report := why != nil && !l.reported
	l.reported = l.reported || why != nil
	in.mu.Unlock()
	if report {
		in.problem(why.Error() + "; it stays on the inbox and is tried again every " + keyRetry.String() + " until the keys can be read")
	}
}

// laterAt is when the first message to try again is due.
func (in *Inbox) laterAt() (time.Time, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	var first time.Time
	for _, l := range in.later {
		if first.IsZero() || l.at.Before(first) {
			first = l.at
		}
	}
	return first, !first.IsZero()
}

// retryDue tries again the messages whose time has come.
func (in *Inbox) retryDue(ctx context.Context) {
	now := time.Now()
	in.mu.Lock()
	var due []*jetstream.RawStreamMsg
	for _, l := range in.later {
		if !l.at.After(now) {
			due = append(due, l.raw) // it stays in later until taken
		}
	}
	in.mu.Unlock()
	for _, raw := range due {
		if ctx.Err() != nil {
			return
		}
		in.take(raw)
	}
}
