package jsmail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Inbox is one agent's consuming end on JetStream; it implements
// mailbox.Inbox. Safe for concurrent use.
type Inbox struct {
	t     *Transport
	agent string
	stop  context.CancelFunc // the lease's renewer
	wg    sync.WaitGroup     // the lease's renewer

	stopRead  context.CancelFunc // the reader
	readers   sync.WaitGroup     // the reader
	wake      chan struct{}      // a message was stored, Read made room, or the lease was lost
	sub       *nats.Subscription // the stream's wake-ups for this inbox
	created   time.Time          // the stream's creation time, as the reader last found it
	token     string             // the lease's value: this consumer
	leaseLost atomic.Value       // error: another consumer holds the lease

	seenMu sync.Mutex
	// unpublished: done recorded a message taken without reaching the
	// owner since the cursor was last put in the team's bucket (seenMu).
	unpublished bool
	seen        *seenLog // what the owner took, and the cursor, on disk (seen.go)

	mu     sync.Mutex
	next   uint64               // the next stream sequence to read (the reader's)
	queue  []mailbox.Message    // received, not yet returned
	held   map[string]heldMsg   // queued or returned, not yet acknowledged
	later  map[uint64]*laterMsg // read, not taken: tried again
	recent *recent              // acknowledged lately
	ready  chan struct{}        // closed while queue is non-empty
	closed bool
	failed error         // why the inbox went deaf (fail), for Read and Receive
	dead   chan struct{} // closed by fail
}

// heldMsg is where a message the owner holds is stored.
type heldMsg struct {
	seq          uint64 // 0 once the stream it was read from is gone
	sent, stored time.Time
}

// laterMsg is a message read but not yet taken: its sender's key could
// not be read, or its dead letter not stored.
type laterMsg struct {
	raw      *jetstream.RawStreamMsg
	at       time.Time // tried again from then
	reported bool
}

// readAhead bounds the messages read and not yet returned.
const readAhead = 256

// ErrDeaf is what Read and Receive of an inbox that can no longer hear
// return (wrapped with why): its stream is not as it must be. It gave up
// its lease; open the inbox again (respawn its owner). It is
// mailbox.ErrDeaf.
var ErrDeaf = mailbox.ErrDeaf

var _ mailbox.Inbox = (*Inbox)(nil)

// OpenInbox takes agent's inbox: it leases it (a second live consumer
// gets mailbox.ErrReaderBusy) and starts reading from the owner's cursor
// (package doc, "Reading by the owner's cursor").
func (t *Transport) OpenInbox(ctx context.Context, agent string) (mailbox.Inbox, error) {
	if err := mailbox.ValidateName(agent); err != nil {
		return nil, fmt.Errorf("mailbox open %s: %w", agent, err)
	}
	if t.cfg.StateDir == "" {
		return nil, fmt.Errorf("mailbox open %s: jsmail.Config.StateDir is empty: an inbox keeps there what its owner took and its cursor in the stream; name a directory on this machine", agent)
	}
	ok, err := t.isRegistered(ctx, agent)
	if err != nil {
		return nil, fmt.Errorf("mailbox open %s: %w", agent, err)
	}
	if !ok {
		return nil, fmt.Errorf("mailbox open %s: %w", agent, mailbox.ErrUnknownRecipient)
	}
	token := fmt.Sprintf("%s pid %d %s", hostname(), os.Getpid(), nuid.Next())
	rev, err := t.leases.Create(ctx, agent, []byte(token))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil, fmt.Errorf("mailbox open %s: %w (a live consumer holds it; one that died frees it within %s)",
			agent, mailbox.ErrReaderBusy, t.cfg.LeaseTTL)
	}
	if err != nil {
		return nil, fmt.Errorf("mailbox open %s: lease: %w", agent, err)
	}
	in := &Inbox{t: t, agent: agent, held: map[string]heldMsg{}, later: map[uint64]*laterMsg{}, recent: newRecent(t.cfg.DedupeWindow),
		ready: make(chan struct{}), wake: make(chan struct{}, 1), dead: make(chan struct{}), token: token}
	if in.seen, err = openSeen(t.cfg.StateDir, agent, t.cfg.DuplicateWindow); err == nil {
		if err = in.start(ctx); err != nil {
			in.seen.close()
		}
	}
	if err != nil {
		_ = t.leases.Delete(context.WithoutCancel(ctx), agent, jetstream.LastRevision(rev))
		return nil, fmt.Errorf("mailbox open %s: %w", agent, err)
	}
	lctx, stop := context.WithCancel(context.Background())
	in.stop = stop
	in.wg.Add(1)
	go func() { defer in.wg.Done(); in.renew(lctx, rev, token) }()
	rctx, stopRead := context.WithCancel(context.Background())
	in.stopRead = stopRead
	in.readers.Go(func() { in.run(rctx) })
	return in, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown-host"
	}
	return h
}

// start finds the stream as Open made it (one gone is made anew:
// reported), sets the cursor in it and subscribes to the stream's
// wake-ups.
func (in *Inbox) start(ctx context.Context) error {
	created, _, err := in.streamNow(ctx)
	if err != nil {
		return err
	}
	if err := in.moveTo(created); err != nil {
		return err
	}
	in.sub, err = in.t.cfg.Conn.Subscribe(in.t.stored(in.agent), func(*nats.Msg) { in.poke() })
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", in.t.stored(in.agent), err)
	}
	return nil
}

// streamNow checks the stream and returns its creation time; a stream
// that is gone is made anew as Open makes it (remade), and reported.
func (in *Inbox) streamNow(ctx context.Context) (created time.Time, remade bool, err error) {
	t := in.t
	created, err = t.checkStream(ctx)
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return created, false, err
	}
	if hook := t.testHookRestore.Load(); hook != nil {
		(*hook)()
	}
	if _, err := t.js.CreateStream(ctx, t.streamConfig()); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return time.Time{}, false, fmt.Errorf("stream %s is gone and cannot be made anew: %w", t.names.stream, err)
	}
	in.problem(fmt.Sprintf("the team's stream %s was deleted under the open inbox: made anew; what it held and %s had not taken is lost (its senders were told it was stored)", t.names.stream, in.agent))
	created, err = t.checkStream(ctx)
	return created, true, err
}

// moveTo sets the cursor in the stream made at created: a stream made
// anew numbers from 1 (what the owner holds from the old one is still
// acknowledged by id).
func (in *Inbox) moveTo(created time.Time) error {
	in.seenMu.Lock()
	err := in.seen.inStream(created)
	floor := in.seen.floor
	in.seenMu.Unlock()
	if err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.created.IsZero() && !in.created.Equal(created) {
		for id, h := range in.held {
			h.seq = 0
			in.held[id] = h
		}
		clear(in.later)
	}
	in.created, in.next = created, floor
	return nil
}

// poke wakes the reader.
func (in *Inbox) poke() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

func (in *Inbox) problem(reason string) {
	in.t.cfg.OnProblem(mailbox.Problem{Agent: in.agent, Path: in.t.inbox(in.agent), Reason: reason})
}

// run is the reader: it reads what is new when the stream says a message
// was stored (or Read made room), what it must try again when its time
// comes, and everything from its cursor at every Config.CheckInterval,
// when it also checks the stream (check). It ends with the inbox, or when
// the inbox fails.
func (in *Inbox) run(ctx context.Context) {
	tick := time.NewTicker(in.t.cfg.CheckInterval)
	defer tick.Stop()
	var since time.Time // the stream's checks have failed since
	for {
		if err, _ := in.leaseLost.Load().(error); err != nil {
			in.fail(err)
			return
		}
		in.drain(ctx)
		var retry <-chan time.Time
		var timer *time.Timer
		if at, ok := in.laterAt(); ok {
			timer = time.NewTimer(time.Until(at))
			retry = timer.C
		}
		hears := true
		select {
		case <-ctx.Done():
			hears = false
		case <-in.wake:
		case <-retry:
		case <-tick.C:
			hears = in.check(ctx, &since)
		}
		if timer != nil {
			timer.Stop()
		}
		if !hears {
			return
		}
	}
}

// check asks the server whether the stream is the one the inbox reads,
// as Open made it. A stream made anew moves the cursor to its start; one
// changed fails the inbox, as does one no server could be asked about
// for Config.LeaseTTL while connected (the time a dead process holds the
// lease). It reports whether the inbox still hears.
func (in *Inbox) check(ctx context.Context, since *time.Time) bool {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	created, remade, err := in.streamNow(cctx)
	switch {
	case err == nil:
		*since = time.Time{}
	case ctx.Err() != nil:
		return false
	case errors.Is(err, errStreamChanged):
		in.fail(err)
		return false
	default:
		if since.IsZero() || !in.t.cfg.Conn.IsConnected() {
			*since = time.Now()
		}
		if time.Since(*since) >= in.t.cfg.LeaseTTL {
			in.fail(err)
			return false
		}
		in.t.cfg.Logger.Debug("mailbox: checking the stream", "agent", in.agent, "err", err)
		return true
	}
	in.mu.Lock()
	was := in.created
	in.mu.Unlock()
	if was.Equal(created) {
		return true
	}
	if !remade {
		in.problem(fmt.Sprintf("the team's stream %s was deleted and made anew by someone else under the open inbox (made %s, was %s): what it held and %s had not taken is lost (its senders were told it was stored)",
			in.t.names.stream, created.UTC().Format(time.RFC3339Nano), was.UTC().Format(time.RFC3339Nano), in.agent))
	}
	if err := in.moveTo(created); err != nil {
		in.fail(err)
		return false
	}
	return true
}

// fail makes a deaf inbox say so: Read and Receive return ErrDeaf, the
// lease is given up at once (a respawned owner can open the inbox), the
// problem is reported, and the lead is told by a message from the owner
// (if this process can sign as it).
func (in *Inbox) fail(why error) {
	in.mu.Lock()
	if in.closed || in.failed != nil {
		in.mu.Unlock()
		return
	}
	in.failed = fmt.Errorf("mailbox %s: %w: %v", in.agent, ErrDeaf, why)
	close(in.dead)
	in.mu.Unlock()
	in.stop() // the renewer deletes the lease
	in.wg.Wait()
	reason := fmt.Sprintf("the inbox can no longer receive and gave up its lease: %v; nothing reaches %s until its inbox is opened again (respawn it)", why, in.agent)
	in.problem(reason)
	if in.agent == in.t.cfg.Lead {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := in.t.Append(ctx, mailbox.Message{From: in.agent, To: in.t.cfg.Lead, Text: "[mailbox] " + reason}); err != nil {
		in.t.cfg.Logger.Debug("mailbox: telling the lead", "agent", in.agent, "err", err)
	}
}

// renew keeps the lease while the inbox is open, at a third of its TTL.
// A lease found gone (deleted by someone, or expired while no server
// answered) is taken again; one another consumer holds makes the inbox
// fail (leaseLost): two consumers of one inbox would each get messages.
func (in *Inbox) renew(ctx context.Context, rev uint64, token string) {
	t := in.t
	tick := time.NewTicker(t.cfg.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// An update cut off by the cancel may have been applied
			// all the same, leaving rev behind the lease's own: the
			// lease is deleted at the revision it has while it holds
			// this inbox's token, so an inbox opened again at once
			// (the owner respawned) finds it free.
			if e, err := t.leases.Get(dctx, in.agent); err == nil && string(e.Value()) == token {
				rev = e.Revision()
			}
			_ = t.leases.Delete(dctx, in.agent, jetstream.LastRevision(rev))
			return
		case <-tick.C:
		}
		r, err := t.leases.Update(ctx, in.agent, []byte(token), rev)
		if err == nil {
			rev = r
			continue
		}
		if ctx.Err() != nil {
			continue
		}
		e, gerr := t.leases.Get(ctx, in.agent)
		switch {
		case errors.Is(gerr, jetstream.ErrKeyNotFound):
			if r, cerr := t.leases.Create(ctx, in.agent, []byte(token)); cerr == nil {
				rev = r
				in.problem("the inbox's lease was gone (deleted by someone, or run out while no server answered): taken again")
				continue
			}
		case gerr == nil && string(e.Value()) == token:
			rev = e.Revision() // ours: an answer to an update was lost
			continue
		case gerr == nil:
			in.leaseLost.Store(fmt.Errorf("another consumer (%s) holds the inbox's lease: its own lease was deleted or ran out",
				clip.String(string(e.Value()), 120)))
			in.poke()
			continue
		}
		t.cfg.OnProblem(mailbox.Problem{Agent: in.agent, Path: t.inbox(in.agent),
			Reason: fmt.Sprintf("renewing the inbox's lease: %v", err)})
	}
}

// Agent names the inbox's owner.
func (in *Inbox) Agent() string { return in.agent }

// Read returns the messages received and not yet returned, without
// waiting.
func (in *Inbox) Read(ctx context.Context) ([]mailbox.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil, mailbox.ErrClosed
	}
	if in.failed != nil {
		return nil, in.failed // what it queued comes to the next consumer
	}
	out := in.queue
	in.queue = nil
	if len(out) > 0 {
		in.ready = make(chan struct{})
		if len(out) >= readAhead {
			in.poke() // room to read on
		}
	}
	return out, nil
}

// Receive waits until at least one message arrives and returns what Read
// would.
func (in *Inbox) Receive(ctx context.Context) ([]mailbox.Message, error) {
	for {
		in.mu.Lock()
		ready, closed := in.ready, in.closed
		in.mu.Unlock()
		if closed {
			return nil, mailbox.ErrClosed
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ready:
		case <-in.dead:
		}
		msgs, err := in.Read(ctx)
		if err != nil || len(msgs) > 0 {
			return msgs, err
		}
	}
}

// Ack records messages this Inbox returned as taken: their ids and the
// cursor are written to the owner's record and synced before it returns,
// so neither this Inbox nor one opened anew on this machine hands them
// over again. The stream keeps them (until Config.MaxAge): nothing
// another client does with the server's consumers takes them from the
// owner.
func (in *Inbox) Ack(ctx context.Context, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return mailbox.ErrClosed
	}
	took := make([]string, 0, len(ids))
	es := make([]seenEntry, 0, len(ids))
	except := map[uint64]bool{}
	for _, id := range ids {
		h, ok := in.held[id]
		if !ok {
			if in.recent.has(id) {
				continue
			}
			in.mu.Unlock()
			return fmt.Errorf("mailbox ack %s: %s: %w", in.agent, id, mailbox.ErrNotDelivered)
		}
		took = append(took, id)
		es = append(es, seenEntry{sent: h.sent, stored: h.stored, seq: h.seq})
		except[h.seq] = true
	}
	floor := in.floorLocked(except)
	in.mu.Unlock()
	if len(took) == 0 {
		return nil
	}
	in.seenMu.Lock()
	err := in.seen.add(took, es, nil, floor)
	in.seenMu.Unlock()
	if err != nil {
		return fmt.Errorf("mailbox ack %s: %w (not recorded: the messages come again)", in.agent, err)
	}
	in.mu.Lock()
	for _, id := range took {
		delete(in.held, id)
		in.recent.add(id)
	}
	in.mu.Unlock()
	in.publishCursor(ctx)
	return nil
}

// Close stops receiving and frees the lease. What was not acknowledged is
// delivered to the next consumer.
func (in *Inbox) Close() error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil
	}
	in.closed = true
	in.mu.Unlock()
	in.stopRead()
	in.readers.Wait()
	_ = in.sub.Unsubscribe()
	in.stop()
	in.wg.Wait()
	in.seenMu.Lock()
	in.seen.close()
	in.seenMu.Unlock()
	return nil
}
