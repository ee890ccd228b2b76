package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionorigin"
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
	// driving is set while the lead works on a prompt (drive); idleSubs
	// are the session sockets to tell, once, when it next stops.
	driving  bool
	idleSubs []string
}

// idleNoticeWait bounds the delivery of one idle notice.
const idleNoticeWait = 5 * time.Second

// receive takes one message from another session: a subscription is
// recorded at once; a message from a session the person started
// (sessionorigin.Judge) is queued with its priority, any other waits for
// a person's decision (hold.go) and is refused when nobody can decide.
func (s *Session) receive(ctx context.Context, m mailbox.Message) error {
	d := sessionsock.DeliveryFrom(ctx)
	if d.NotifyIdle != "" {
		if err := s.subscribeIdle(ctx, d.NotifyIdle); err != nil {
			return err
		}
		if d.SubscribeOnly {
			return nil
		}
	}
	it := task.Item{Kind: task.ItemTeammateMessage, Text: mailbox.Render(m), From: m.From}
	peer, _ := sessionsock.PeerFrom(ctx)
	v := sessionorigin.Judge(s.sessionsDir(), peer.PID)
	if v.Person {
		return s.enqueueInbound(it, d.Priority)
	}
	if !s.personCanDecide() {
		return errNobodyToApprove
	}
	s.held.Hold(heldMessage{msg: m, item: it, priority: d.Priority, why: v.Why})
	return nil
}

// enqueueInbound hands an approved message from another session to the
// lead's queue as its priority asks.
func (s *Session) enqueueInbound(it task.Item, priority string) error {
	q := s.lead.Queue()
	switch priority {
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

// subscribeIdle records a session socket to notify when the lead next
// stops; a lead that is not working is idle now, so it is told at once.
// Only a session socket of this machine's sessions directory is accepted:
// a message cannot make this session connect anywhere else.
func (s *Session) subscribeIdle(ctx context.Context, path string) error {
	dir := filepath.Join(s.Process.Paths.CohortHome, "sessions")
	if filepath.Dir(path) != dir || !strings.HasSuffix(path, ".sock") || path == s.socket {
		return fmt.Errorf("notify_idle must be another session's socket in %s", dir)
	}
	s.inbound.mu.Lock()
	if s.inbound.driving {
		if !slices.Contains(s.inbound.idleSubs, path) {
			s.inbound.idleSubs = append(s.inbound.idleSubs, path)
		}
		s.inbound.mu.Unlock()
		return nil
	}
	s.inbound.mu.Unlock()
	s.tellIdle(ctx, []string{path}, "is idle")
	return nil
}

// startDrive marks the lead at work; endDrive marks it idle and tells the
// subscribers, once each.
func (s *Session) startDrive() {
	s.inbound.mu.Lock()
	defer s.inbound.mu.Unlock()
	s.inbound.driving = true
}

func (s *Session) endDrive(state string) {
	s.inbound.mu.Lock()
	s.inbound.driving = false
	subs := s.inbound.idleSubs
	s.inbound.idleSubs = nil
	s.inbound.mu.Unlock()
	s.tellIdle(context.Background(), subs, state)
}

// tellIdle sends the idle notice to each subscriber, each bounded by
// idleNoticeWait; a subscriber that is gone is skipped.
func (s *Session) tellIdle(ctx context.Context, subs []string, state string) {
	for _, path := range subs {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), idleNoticeWait)
		text := fmt.Sprintf("[Session idle notice] The session at uds:%s %s: it has finished its turn and nothing waits for it. This notice is sent once; ask again with notify_when_idle to hear of its next idle.", s.socket, state)
		if state == "has exited" {
			text = fmt.Sprintf("[Session idle notice] The session at uds:%s has exited; it will not answer.", s.socket)
		}
		if _, err := sessionsock.Send(ctx, path, mailbox.Message{From: "session " + s.id, Text: text}); err != nil {
			s.logf("idle notice to %s: %v", path, err)
		}
		cancel()
	}
}
