package teammate

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/transcript"
)

// chatQueue holds a teammate's chat messages until the engine takes them
// (engine.Inbox). Taking them acknowledges them in the mailbox. Safe for
// concurrent use.
type chatQueue struct {
	mu    sync.Mutex
	msgs  []mailbox.Message
	ready chan struct{} // closed while msgs is non-empty
	ack   func(ids []string)
}

func newChatQueue(ack func(ids []string)) *chatQueue {
	return &chatQueue{ready: make(chan struct{}), ack: ack}
}

func (q *chatQueue) push(m mailbox.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 {
		close(q.ready)
	}
	q.msgs = append(q.msgs, m)
}

// Ready returns a channel closed while messages wait.
func (q *chatQueue) Ready() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready
}

func (q *chatQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// Drain renders the waiting messages for the model and acknowledges them.
func (q *chatQueue) Drain() []llm.Block {
	var blocks []llm.Block
	for _, p := range q.DrainParts() {
		blocks = append(blocks, p.Content...)
	}
	return blocks
}

// DrainParts takes every waiting message, each a part of its own with its
// sender, and acknowledges them.
func (q *chatQueue) DrainParts() []engine.Part {
	q.mu.Lock()
	msgs := q.msgs
	q.msgs = nil
	if len(msgs) > 0 {
		q.ready = make(chan struct{})
	}
	q.mu.Unlock()
	if len(msgs) == 0 {
		return nil
	}
	parts := make([]engine.Part, len(msgs))
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = engine.Part{Content: []llm.Block{mailbox.Block(m)}, Origin: transcript.OriginTeammate, From: m.From}
		ids[i] = m.ID
	}
	q.ack(ids)
	return parts
}

// waiters routes responses (permission, plan approval, shutdown) to the
// goroutine waiting for their request id. A response counts only when it
// comes from the agent the request was sent to: a request id travels in
// the clear (any member reading the wire sees it), so the id alone names
// no one. Safe for concurrent use.
type waiters struct {
	mu sync.Mutex
	m  map[string]waiter
}

type waiter struct {
	from string // the agent asked
	ch   chan mailbox.Message
}

// add waits for the answer of from to request id.
func (w *waiters) add(id, from string) chan mailbox.Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]waiter{}
	}
	ch := make(chan mailbox.Message, 1)
	w.m[id] = waiter{from: from, ch: ch}
	return ch
}

func (w *waiters) remove(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, id)
}

// deliver hands m to the waiter for id when m is from the agent that was
// asked, and reports true. Otherwise it reports false and asked: the
// agent that was asked when someone else answered in its place (the
// waiter keeps waiting for the real answer), "" when nobody waits for id.
func (w *waiters) deliver(id string, m mailbox.Message) (ok bool, asked string) {
	w.mu.Lock()
	wt, found := w.m[id]
	if found && wt.from != m.From {
		w.mu.Unlock()
		return false, wt.from
	}
	delete(w.m, id)
	w.mu.Unlock()
	if found {
		wt.ch <- m
	}
	return found, ""
}

// requestID reads the request_id of a response payload.
func requestID(m mailbox.Message) string {
	p, err := m.Payload()
	if err != nil {
		return ""
	}
	switch p := p.(type) {
	case mailbox.PermissionResponse:
		return p.RequestID
	case mailbox.PlanApprovalResponse:
		return p.RequestID
	case mailbox.ShutdownResponse:
		return p.RequestID
	}
	return ""
}

// receiveLoop reads r until ctx ends, handing every batch to handle. An
// inbox that can no longer receive (mailbox.ErrDeaf) ends it: deaf, if not
// nil, is told why.
func receiveLoop(ctx context.Context, r mailbox.Inbox, handle func([]mailbox.Message), deaf func(error), logf func(string, ...any)) {
	for {
		msgs, err := r.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, mailbox.ErrDeaf) {
			logf("mailbox %s: %v; nothing more is received", r.Agent(), err)
			if deaf != nil {
				deaf(err)
			}
			return
		}
		if err != nil {
			logf("mailbox %s: %v", r.Agent(), err)
			select {
			case <-ctx.Done():
				return
			case <-afterRetry():
			}
			continue
		}
		handle(msgs)
	}
}

// afterRetry paces retries of a failing mailbox read.
func afterRetry() <-chan time.Time { return time.After(250 * time.Millisecond) }
