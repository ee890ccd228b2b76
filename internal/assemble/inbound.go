package assemble

import (
	"context"
	"sync"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
	"github.com/cohort-dev/cohort/task"
)

// inbound holds the messages from other sessions (uds:) that asked for
// priority "later" while the lead's turn runs; the turn's end hands them
// over (sessionsock documents what each priority does).
type inbound struct {
	mu      sync.Mutex
	turning bool
	later   []task.Item
}

// receive hands one message from another session to the lead's queue as
// its priority asks.
func (s *Session) receive(ctx context.Context, m mailbox.Message) error {
	it := task.Item{Kind: task.ItemTeammateMessage, Text: mailbox.Render(m), From: m.From}
	q := s.lead.Queue()
	switch sessionsock.DeliveryFrom(ctx).Priority {
	case sessionsock.PriorityNow:
		q.EnqueueFirst(it)
	case sessionsock.PriorityLater:
		s.inbound.mu.Lock()
		defer s.inbound.mu.Unlock()
		if s.inbound.turning {
			s.inbound.later = append(s.inbound.later, it)
			return nil
		}
		q.Enqueue(it)
	default:
		q.Enqueue(it)
	}
	return nil
}

// leadTurn runs one turn of the lead, holding "later" messages while it
// runs and handing them over when it ends.
func (s *Session) leadTurn(ctx context.Context, lead *engine.Conversation, parts []engine.Part) (*engine.Result, error) {
	s.inbound.mu.Lock()
	s.inbound.turning = true
	s.inbound.mu.Unlock()
	defer func() {
		s.inbound.mu.Lock()
		defer s.inbound.mu.Unlock()
		s.inbound.turning = false
		for _, it := range s.inbound.later {
			s.lead.Queue().Enqueue(it)
		}
		s.inbound.later = nil
	}()
	return lead.SendParts(ctx, parts)
}

