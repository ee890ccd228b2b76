package jsmail

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

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

	reset      chan struct{}      // asks the restarter to make the consumer anew
	stopReset  context.CancelFunc // stops the restarter
	resetters  sync.WaitGroup     // the restarter
	consumeCtx jetstream.ConsumeContext

	mu     sync.Mutex
	queue  []mailbox.Message        // received, not yet returned
	held   map[string]jetstream.Msg // returned, not yet acknowledged
	recent *recent                  // acknowledged lately
	ready  chan struct{}            // closed while queue is non-empty
	closed bool
}

var _ mailbox.Inbox = (*Inbox)(nil)

// OpenInbox takes agent's inbox: it leases it (a second live consumer
// gets mailbox.ErrReaderBusy), makes its durable consumer anew so that
// whatever a dead consumer left unacknowledged comes at once, and starts
// receiving.
func (t *Transport) OpenInbox(ctx context.Context, agent string) (mailbox.Inbox, error) {
	if err := mailbox.ValidateName(agent); err != nil {
		return nil, fmt.Errorf("mailbox open %s: %w", agent, err)
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
		ready: make(chan struct{}), reset: make(chan struct{}, 1)}
	if err := in.start(ctx); err != nil {
		_ = t.leases.Delete(context.WithoutCancel(ctx), agent, jetstream.LastRevision(rev))
		return nil, fmt.Errorf("mailbox open %s: %w", agent, err)
	}
	lctx, stop := context.WithCancel(context.Background())
	in.stop = stop
	in.wg.Add(1)
	go func() { defer in.wg.Done(); in.renew(lctx, rev, token) }()
	rctx, stopReset := context.WithCancel(context.Background())
	in.stopReset = stopReset
	in.resetters.Go(func() { in.restarter(rctx) })
	return in, nil
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown-host"
	}
	return h
}

// start makes the consumer anew and subscribes to it.
func (in *Inbox) start(ctx context.Context) error {
	t := in.t
	err := t.stream.DeleteConsumer(ctx, consumerName(in.agent))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("reset consumer: %w", err)
	}
	if err := t.checkDuplicates(ctx); err != nil {
		return err
	}
	cons, err := t.ensureConsumer(ctx, in.agent)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	cc, err := cons.Consume(in.deliver, jetstream.PullMaxMessages(256), jetstream.PullExpiry(t.cfg.PullExpiry),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if errors.Is(err, jetstream.ErrConsumerLeadershipChanged) || errors.Is(err, jetstream.ErrNoHeartbeat) {
				select {
				case in.reset <- struct{}{}:
				default:
				}
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

// restarter makes the consumer anew when the server lost track of it: its
// leader changed, or its heartbeats stopped (a node of the cluster died).
// A message the dead leader had handed over but that never arrived is then
// "delivered, not acknowledged" and would wait out the hour-long ack wait;
// a consumer made anew redelivers it at once, and what the owner already
// holds comes again only to refresh its handle (deliver).
func (in *Inbox) restarter(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-in.reset:
		}
		for ctx.Err() == nil {
			in.mu.Lock()
			cc := in.consumeCtx
			in.mu.Unlock()
			cc.Stop()
			<-cc.Closed()
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := in.start(actx)
			cancel()
			if err == nil {
				break
			}
			in.t.cfg.OnProblem(mailbox.Problem{Agent: in.agent, Path: in.t.inbox(in.agent),
				Reason: fmt.Sprintf("making the consumer anew after its server was lost: %v (trying again)", err)})
			pause := time.NewTimer(time.Second)
			select {
			case <-pause.C:
			case <-ctx.Done():
				pause.Stop()
			}
		}
	}
}

// renew keeps the lease while the inbox is open, at a third of its TTL.
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
		if ctx.Err() == nil {
			t.cfg.OnProblem(mailbox.Problem{Agent: in.agent, Path: t.inbox(in.agent),
				Reason: fmt.Sprintf("renewing the inbox's lease: %v", err)})
		}
	}
}

// Agent names the inbox's owner.
func (in *Inbox) Agent() string { return in.agent }

// deliver runs for every message the consumer hands over: it checks it,
// dead-letters what cannot be read, drops repeats and queues the rest.
func (in *Inbox) deliver(msg jetstream.Msg) {
	m, err := in.t.open(msg, in.agent)
	if errors.Is(err, ErrKeyUnavailable) {
		in.t.later(msg, in.agent, err)
		return
	}
	if err != nil {
		in.t.refuse(msg, in.agent, err)
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return // redelivered to the next consumer
	}
	if _, ok := in.held[m.ID]; ok {
		in.held[m.ID] = msg // a redelivery of what the owner is handling
		return
	}
	if in.recent.has(m.ID) || in.queued(m.ID) {
		_ = msg.Ack() // a re-send past the server's window
		return
	}
	if len(in.queue) == 0 {
		close(in.ready)
	}
	in.queue = append(in.queue, m)
	in.held[m.ID] = msg
}

func (in *Inbox) queued(id string) bool {
	for _, q := range in.queue {
		if q.ID == id {
			return true
		}
	}
	return false
}

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
	}
	in.mu.Unlock()
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
	return nil
}

// recent is a bounded set of acknowledged ids, oldest dropped first.
type recent struct {
	ids  []string
	set  map[string]bool
	next int
}

func newRecent(n int) *recent { return &recent{ids: make([]string, 0, n), set: map[string]bool{}} }

func (r *recent) has(id string) bool { return r.set[id] }

func (r *recent) add(id string) {
	if r.set[id] {
		return
	}
	if len(r.ids) < cap(r.ids) {
		r.ids = append(r.ids, id)
	} else {
		delete(r.set, r.ids[r.next])
		r.ids[r.next] = id
		r.next = (r.next + 1) % len(r.ids)
	}
	r.set[id] = true
}
