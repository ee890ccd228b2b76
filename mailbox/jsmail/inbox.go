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
	stop  context.CancelFunc
	wg    sync.WaitGroup // the lease's renewer

	reset      chan struct{}      // asks the watcher to make the consumer anew
	stopReset  context.CancelFunc // stops the watcher
	resetters  sync.WaitGroup     // the watcher
	consumeCtx jetstream.ConsumeContext
	created    [2]time.Time             // the stream's and the consumer's, as start made them
	consumer   jetstream.ConsumerConfig // the consumer's config as the server gave it at start
	lost       atomic.Value             // string: what the consumer handler or check found changed, for restore's report
	token      string                   // the lease's value: this consumer
	leaseLost  atomic.Value             // error: another consumer holds the lease

	seenMu sync.Mutex
	seen   *seenLog // acknowledged ids, on disk (seen.go)

	mu     sync.Mutex
	queue  []mailbox.Message        // received, not yet returned
	held   map[string]jetstream.Msg // returned, not yet acknowledged
	recent *recent                  // acknowledged lately
	ready  chan struct{}            // closed while queue is non-empty
	closed bool
	failed error         // why the inbox went deaf (fail), for Read and Receive
	dead   chan struct{} // closed by fail
	// handedOut follows the consumer's delivery numbers, to find the
	// deliveries another client pulled (gaps.go).
	handedOut deliveries
}

// ErrDeaf is what Read and Receive of an inbox that can no longer hear
// return (wrapped with why): its consumer or stream is gone or changed and
// could not be made as it must be. It gave up its lease; open the inbox
// again (respawn its owner). It is mailbox.ErrDeaf.
var ErrDeaf = mailbox.ErrDeaf

var _ mailbox.Inbox = (*Inbox)(nil)

// OpenInbox takes agent's inbox: it leases it (a second live consumer
// gets mailbox.ErrReaderBusy), makes its durable consumer anew so that
// whatever a dead consumer left unacknowledged comes at once, and starts
// receiving.
func (t *Transport) OpenInbox(ctx context.Context, agent string) (mailbox.Inbox, error) {
	if err := mailbox.ValidateName(agent); err != nil {
		return nil, fmt.Errorf("mailbox open %s: %w", agent, err)
	}
	if t.cfg.StateDir == "" {
		return nil, fmt.Errorf("mailbox open %s: jsmail.Config.StateDir is empty: an inbox keeps there the ids its owner acknowledged, so that a replayed message is refused after a restart; name a directory on this machine", agent)
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
	in := &Inbox{t: t, agent: agent, held: map[string]jetstream.Msg{}, recent: newRecent(t.cfg.DedupeWindow),
		ready: make(chan struct{}), reset: make(chan struct{}, 1), dead: make(chan struct{}), token: token}
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
	rctx, stopReset := context.WithCancel(context.Background())
	in.stopReset = stopReset
	in.resetters.Go(func() { in.watch(rctx) })
	return in, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown-host"
	}
	return h
}

// start makes the consumer anew and subscribes to it. A stream that is
// gone is made anew (what it held is lost: reported); one that is not as
// Open makes it is refused (errStreamChanged).
func (in *Inbox) start(ctx context.Context) error {
	t := in.t
	err := t.stream.DeleteConsumer(ctx, consumerName(in.agent))
	remade := false
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := t.js.CreateStream(ctx, t.streamConfig()); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("stream %s is gone and cannot be made anew: %w", t.names.stream, err)
		}
		remade = true
	} else if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("reset consumer: %w", err)
	}
	streamMade, err := t.checkStream(ctx)
	if err != nil {
		return err
	}
	cons, err := t.ensureConsumer(ctx, in.agent)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	in.mu.Lock()
	was := in.created[0]
	in.created = [2]time.Time{streamMade, cons.CachedInfo().Created}
	in.consumer = cons.CachedInfo().Config
	in.handedOut.reset()
	in.mu.Unlock()
	switch {
	case remade:
		in.problem(fmt.Sprintf("the team's stream %s was deleted under the open inbox: made anew; what it held and was not yet acknowledged is lost (its senders were told it was stored)", t.names.stream))
	case !was.IsZero() && !was.Equal(streamMade):
		in.problem(fmt.Sprintf("the team's stream %s was deleted and made anew by someone else under the open inbox (made %s, was %s): what it held and was not yet acknowledged is lost (its senders were told it was stored)",
			t.names.stream, streamMade.UTC().Format(time.RFC3339), was.UTC().Format(time.RFC3339)))
	}
	cc, err := cons.Consume(in.deliver, jetstream.PullMaxMessages(256), jetstream.PullExpiry(t.cfg.PullExpiry),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			// A deleted consumer ends Consume (nats.go): make it anew at
			// once. So do a new leader and missed heartbeats (below).
			if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
				in.lost.Store(fmt.Sprintf("the inbox's consumer %s was deleted, not by the inbox", consumerName(in.agent)))
			}
			if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
				errors.Is(err, jetstream.ErrBadRequest) ||
				errors.Is(err, jetstream.ErrConsumerLeadershipChanged) || errors.Is(err, jetstream.ErrNoHeartbeat) {
				in.restart()
			}
			if !errors.Is(err, nats.ErrConnectionClosed) {
				t.cfg.Logger.Debug("mailbox consume", "agent", in.agent, "err", err)
			}
		}))
	if err != nil {
		return err
	}
	in.mu.Lock()
	in.consumeCtx = cc
	in.mu.Unlock()
	return nil
}

func (in *Inbox) restart() {
	select {
	case in.reset <- struct{}{}:
	default:
	}
}

func (in *Inbox) problem(reason string) {
	in.t.cfg.OnProblem(mailbox.Problem{Agent: in.agent, Path: in.t.inbox(in.agent), Reason: reason})
}

// watch keeps the inbox hearing. It makes the consumer anew when the
// server lost track of it (its leader changed, its heartbeats stopped: a
// node of the cluster died), when it was deleted, and when the check
// every Config.CheckInterval finds it or the stream gone or not as start
// made them. A message the dead leader had handed over but that never
// arrived is then "delivered, not acknowledged" and would wait out the
// hour-long ack wait; a consumer made anew redelivers it at once, and
// what the owner already holds comes again only to refresh its handle
// (deliver). An inbox that cannot be made to hear again fails (fail).
func (in *Inbox) watch(ctx context.Context) {
	tick := time.NewTicker(in.t.cfg.CheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.reset:
		case <-tick.C:
			err := in.check(ctx)
			in.tellLead(ctx)
			if err == nil || ctx.Err() != nil {
				continue
			}
			in.lost.Store(err.Error())
		}
		// Why this restore, taken before it: a loss of the consumer it
		// makes (deleted again once it hears) is the next round's, and
		// reported then, not folded into this report.
		why, _ := in.lost.Swap("").(string)
		if !in.restore(ctx) {
			return
		}
		if why != "" {
			in.problem(fmt.Sprintf("%s: made anew; what it held unacknowledged comes again", why))
		}
	}
}

// check asks the server whether the consumer and the stream are still
// the ones start made, as it made them.
func (in *Inbox) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	name := consumerName(in.agent)
	c, err := in.t.stream.Consumer(ctx, name)
	if err != nil {
		return fmt.Errorf("consumer %s: %w", name, err)
	}
	info := c.CachedInfo()
	in.mu.Lock()
	made, want := in.created, in.consumer
	in.mu.Unlock()
	if !info.Created.Equal(made[1]) {
		return fmt.Errorf("consumer %s was made anew by someone else", name)
	}
	if diff := consumerChanges(info.Config, want); diff != "" {
		return fmt.Errorf("consumer %s was changed by someone else (%s)", name, diff)
	}
	in.noteChecked(info)
	streamMade, err := in.t.checkStream(ctx)
	if err != nil {
		return err
	}
	if !streamMade.Equal(made[0]) {
		return fmt.Errorf("stream %s was made anew", in.t.names.stream)
	}
	return nil
}

// restore makes the consumer anew, trying again for up to Config.LeaseTTL
// (the time a dead process holds the lease); then, or at once if the
// stream is not as it must be, the inbox fails. It reports whether the
// inbox hears again. A try that fails is not reported: the server's
// answers while a consumer of the same name is being deleted ("consumer
// does not exist", 10149; "error creating store", 10012) are transient,
// and the next try makes it; only giving up is (fail, with the last
// error).
func (in *Inbox) restore(ctx context.Context) bool {
	deadline := time.Now().Add(in.t.cfg.LeaseTTL)
	for {
		in.mu.Lock()
		cc := in.consumeCtx
		in.mu.Unlock()
		cc.Stop()
		<-cc.Closed()
		// What the stopped consumption signalled (its error handler may
		// fire more than once for one deletion) is answered by this
		// restore: a request or loss left over would make the new
		// consumer anew again, racing whoever deletes it next, and report
		// a deletion twice.
		select {
		case <-in.reset:
		default:
		}
		in.lost.Store("")
		if hook := in.t.testHookRestore.Load(); hook != nil {
			(*hook)()
		}
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := in.ownsLease(actx)
		if err == nil {
			err = in.start(actx)
		}
		cancel()
		if err == nil || ctx.Err() != nil {
			return err == nil
		}
		if !in.t.cfg.Conn.IsConnected() {
			// No server answers: the lease runs out on its own, and the
			// time to give up starts once one answers again.
			deadline = time.Now().Add(in.t.cfg.LeaseTTL)
		}
		if errors.Is(err, errStreamChanged) || in.leaseLost.Load() != nil || !time.Now().Before(deadline) {
			in.fail(err)
			return false
		}
		pause := time.NewTimer(min(time.Second, in.t.cfg.CheckInterval))
		select {
		case <-pause.C:
		case <-ctx.Done():
			pause.Stop()
			return false
		}
	}
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
			in.restart()
			continue
		}
		t.cfg.OnProblem(mailbox.Problem{Agent: in.agent, Path: t.inbox(in.agent),
			Reason: fmt.Sprintf("renewing the inbox's lease: %v", err)})
	}
}

// ownsLease checks, before the consumer is made anew, that no other
// consumer took the inbox meanwhile (a lease gone is taken again by
// renew: a transient error).
func (in *Inbox) ownsLease(ctx context.Context) error {
	if err, _ := in.leaseLost.Load().(error); err != nil {
		return err
	}
	e, err := in.t.leases.Get(ctx, in.agent)
	if err != nil {
		return fmt.Errorf("the inbox's lease: %w", err)
	}
	if string(e.Value()) != in.token {
		err := fmt.Errorf("another consumer (%s) holds the inbox's lease", clip.String(string(e.Value()), 120))
		in.leaseLost.Store(err)
		return err
	}
	return nil
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

// Ack acknowledges messages this Inbox returned. The last acknowledgement
// waits for the server's confirmation; the others precede it on the same
// connection, so when Ack returns the server has deleted them all and a
// restarted consumer will not see them again.
func (in *Inbox) Ack(ctx context.Context, ids ...string) error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return mailbox.ErrClosed
	}
	msgs := make([]jetstream.Msg, 0, len(ids))
	took := make([]string, 0, len(ids))
	for _, id := range ids {
		msg, ok := in.held[id]
		if !ok {
			if in.recent.has(id) {
				continue
			}
			in.mu.Unlock()
			return fmt.Errorf("mailbox ack %s: %s: %w", in.agent, id, mailbox.ErrNotDelivered)
		}
		msgs = append(msgs, msg)
		took = append(took, id)
	}
	in.mu.Unlock()
	if err := in.record(took, msgs); err != nil {
		return fmt.Errorf("mailbox ack %s: %w (not acknowledged: the messages come again)", in.agent, err)
	}
	for i, msg := range msgs {
		var err error
		if i == len(msgs)-1 {
			err = msg.DoubleAck(ctx)
		} else {
			err = msg.Ack()
		}
		if err != nil {
			return fmt.Errorf("mailbox ack %s: %w", in.agent, err)
		}
	}
	in.mu.Lock()
	for _, id := range ids {
		if _, ok := in.held[id]; ok {
			delete(in.held, id)
			in.recent.add(id)
		}
	}
	in.mu.Unlock()
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
	in.stopReset()
	in.resetters.Wait()
	in.mu.Lock()
	cc := in.consumeCtx
	in.mu.Unlock()
	cc.Stop()
	<-cc.Closed()
	in.stop()
	in.wg.Wait()
	in.seenMu.Lock()
	in.seen.close()
	in.seenMu.Unlock()
	return nil
}
