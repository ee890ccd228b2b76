package teammate

import (
	"context"
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
// goroutine waiting for their request id. Safe for concurrent use.
type waiters struct {
	mu sync.Mutex
	m  map[string]chan mailbox.Message
}

func (w *waiters) add(id string) chan mailbox.Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]chan mailbox.Message{}
	}
	ch := make(chan mailbox.Message, 1)
	w.m[id] = ch
	return ch
}

func (w *waiters) remove(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, id)
}

// deliver hands m to the waiter for id; false when nobody waits.
func (w *waiters) deliver(id string, m mailbox.Message) bool {
	w.mu.Lock()
	ch, ok := w.m[id]
	delete(w.m, id)
	w.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
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

// receiveLoop reads r until ctx ends, handing every batch to handle.
func receiveLoop(ctx context.Context, r mailbox.Inbox, handle func([]mailbox.Message), logf func(string, ...any)) {
	for {
		msgs, err := r.Receive(ctx)
		if ctx.Err() != nil {
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
