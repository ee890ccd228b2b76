package jsmail

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// storedMsg is a delivery whose subject, headers and body are read from
// the stream (the delivery itself is still what is acknowledged).
type storedMsg struct {
	jetstream.Msg
	raw *jetstream.RawStreamMsg
}

func (m storedMsg) Data() []byte         { return m.raw.Data }
func (m storedMsg) Headers() nats.Header { return m.raw.Header }
func (m storedMsg) Subject() string      { return m.raw.Subject }

// stored reads the message msg delivers from the stream, by its
// sequence; it must be stored under the subject it was delivered on.
func (in *Inbox) stored(msg jetstream.Msg) (jetstream.Msg, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := in.t.stream.GetMsg(ctx, meta.Sequence.Stream)
	if err != nil {
		return nil, err
	}
	if raw.Subject != msg.Subject() {
		return nil, fmt.Errorf("stream sequence %d holds a message on %s, not %s", meta.Sequence.Stream, raw.Subject, msg.Subject())
	}
	return storedMsg{Msg: msg, raw: raw}, nil
}

// deliver runs for every message the consumer hands over: it checks it,
// dead-letters what cannot be read, drops repeats and queues the rest.
// headersOnly asks the server whether the inbox's consumer hands over
// headers only, as a bodiless delivery suggests.
func (in *Inbox) headersOnly() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := in.t.stream.Consumer(ctx, consumerName(in.agent))
	return err == nil && c.CachedInfo().Config.HeadersOnly
}

func (in *Inbox) deliver(msg jetstream.Msg) {
	in.noteDelivery(msg)
	if len(msg.Data()) == 0 && msg.Headers().Get(nats.MsgSize) != "" {
		// Handed over without its body: the stream holds the message as
		// it was sent, whatever the consumer looks like by now (it may
		// have been set to headers only and put back between this
		// delivery and any check of it), so it is read from there and
		// judged on what the sender sent.
		if whole, err := in.stored(msg); err == nil {
			msg = whole
		}
	}
	if len(msg.Data()) == 0 && msg.Headers().Get(nats.MsgSize) != "" && in.headersOnly() {
		// Handed over without its body (someone set the consumer to
		// headers only): not the sender's fault, so not dead-lettered.
		// It stays unacknowledged; the consumer made anew brings it whole.
		// (A sender's own Nats-Msg-Size header on a live consumer is
		// refused below as any bad message is.)
		in.lost.Store(fmt.Sprintf("consumer %s hands over messages without their bodies (set to headers only by someone else)", consumerName(in.agent)))
		in.restart()
		return
	}
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
	in.seenMu.Lock()
	seen := in.seen.has(m.ID)
	in.seenMu.Unlock()
	if seen {
		// Acknowledged before, by this owner (on this machine), perhaps
		// before a restart: a replay the server forgot (a stream made
		// anew, a server restart), or a message whose Ack was cut off.
		_ = msg.Ack()
		in.t.cfg.Logger.Debug("mailbox: an acknowledged id came again, dropped", "agent", in.agent, "id", m.ID)
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
