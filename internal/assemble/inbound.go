package assemble

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/crew"
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
	// are the session sockets to tell, once, when it next stops with
	// nothing waiting.
	driving  bool
	idleSubs []string
	// sent are the subscribers whose message reached the queue: their
	// notice says it was read.
	sent map[string]bool
	// unread is set when a message from another session reaches the
	// lead's queue, and cleared when a drive starts (it reads the whole
	// queue): only such a message wakes the lead (wake.go), not what else
	// may wait there between Runs.
	unread bool
	// turns counts the lead's Turns under way (a Run's, before and after
	// its drive too).
	turns int
	// wake is the loop that starts a turn when a message reaches the idle
	// lead (wake.go); nil without one.
	wake *waker
	// answered is set when a one-shot session (print mode) has ended its
	// drive: it reads no more messages.
	answered bool
	// awaiting are the idle notices a one-shot session asked other
	// sessions for and has not had, by session id (notices.go).
	awaiting map[string]*awaitedNotice
}

// idleNoticeWait bounds the delivery of one idle notice.
const idleNoticeWait = 5 * time.Second

// errAnswered refuses a message to a one-shot session that has answered.
var errAnswered = errors.New("this session ran one prompt (print mode, -p) and has given its answer; it ends without reading more messages, " +
	"so the message was not delivered")

// receive takes one message from another session: a subscription alone
// is recorded at once; a message from a session the person started
// (sessionorigin.Judge) is queued with its priority, any other waits for
// a person's decision (hold.go) and is refused when nobody can decide. A
// subscription that comes with a message is for the lead's idle after it
// has read that message, not before.
func (s *Session) receive(ctx context.Context, m mailbox.Message) error {
	d := sessionsock.DeliveryFrom(ctx)
	if d.NotifyIdle != "" {
		if err := s.checkSubscriber(d.NotifyIdle); err != nil {
			return err
		}
		if d.SubscribeOnly {
			s.subscribeIdle(ctx, d.NotifyIdle)
			return nil
		}
	}
	it := task.Item{Kind: task.ItemTeammateMessage, Text: mailbox.Render(m), From: m.From}
	peer, _ := sessionsock.PeerFrom(ctx)
	v := sessionorigin.Judge(s.sessionsDir(), peer.PID)
	if v.Person {
		return s.enqueue(it, d.Priority, d.NotifyIdle, noticeFrom(m))
	}
	if id := noticeFrom(m); id != "" {
		s.noticeCame(id) // it came, whatever becomes of it
	}
	if !s.personCanDecide() {
		return errNobodyToApprove
	}
	s.held.Hold(heldMessage{msg: m, item: it, priority: d.Priority, why: v.Why, notify: d.NotifyIdle})
	return nil
}

// enqueueInbound hands an approved message from another session to the
// lead's queue as its priority asks, records notify (a subscriber's
// socket, or empty) for the lead's next idle with nothing waiting, and
// kicks the wake loop: an idle lead starts a turn on it.
func (s *Session) enqueueInbound(it task.Item, priority, notify string) error {
	return s.enqueue(it, priority, notify, "")
}

// enqueue is enqueueInbound for an item that may be the idle notice of
// session notice (or ""), counted as had in the step that queues it.
func (s *Session) enqueue(it task.Item, priority, notify, notice string) error {
	s.inbound.mu.Lock()
	if notice != "" {
		if socket, quiet := s.repliedLocked(notice); quiet {
			s.noticeCameLocked(notice)
			s.inbound.mu.Unlock()
			fmt.Fprintf(s.Process.Stderr, "cohort: the session at uds:%s is idle now, after its reply; print mode starts no turn for its notice\n", socket)
			return nil
		}
		s.noticeCameLocked(notice)
	} else {
		s.noteReplyLocked(it.From)
	}
	if s.inbound.answered {
		s.inbound.mu.Unlock()
		return errAnswered
	}
	q := s.lead.Queue()
	switch {
	case priority == sessionsock.PriorityNow:
		q.EnqueueFirst(it)
	case priority == sessionsock.PriorityLater && s.inbound.turning:
		s.inbound.later = append(s.inbound.later, it)
	default:
		q.Enqueue(it)
	}
	if priority != sessionsock.PriorityLater || !s.inbound.turning {
		s.inbound.unread = true
	}
	if notify != "" && !slices.Contains(s.inbound.idleSubs, notify) {
		s.inbound.idleSubs = append(s.inbound.idleSubs, notify)
	}
	if notify != "" {
		if s.inbound.sent == nil {
			s.inbound.sent = map[string]bool{}
		}
		s.inbound.sent[notify] = true
	}
	s.inbound.mu.Unlock()
	s.Kick()
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
			s.inbound.unread = true
		}
		s.inbound.later = nil
	}()
	return lead.SendParts(ctx, parts)
}

// checkSubscriber accepts only a session socket of this machine's
// sessions directory as a subscriber: a message cannot make this session
// connect anywhere else.
func (s *Session) checkSubscriber(path string) error {
	dir := filepath.Join(s.Process.Paths.CohortHome, "sessions")
	if filepath.Dir(path) != dir || !strings.HasSuffix(path, ".sock") || path == s.socket {
		return fmt.Errorf("notify_idle must be another session's socket in %s", dir)
	}
	return nil
}

// subscribeIdle records a session socket to notify when the lead next
// stops with nothing waiting; a lead that is not working and has nothing
// waiting is idle now, so it is told at once.
func (s *Session) subscribeIdle(ctx context.Context, path string) {
	s.inbound.mu.Lock()
	if s.inbound.driving || s.inbound.unread || len(s.inbound.later) > 0 {
		if !slices.Contains(s.inbound.idleSubs, path) {
			s.inbound.idleSubs = append(s.inbound.idleSubs, path)
		}
		s.inbound.mu.Unlock()
		return
	}
	s.inbound.mu.Unlock()
	s.tellIdle(ctx, []string{path}, "is idle", nil)
}

// startDrive marks the lead at work; endDrive marks it idle and tells the
// subscribers, once each, unless a message from another session waits in
// its queue (it came after the drive last looked): they hear of the end
// of the turn that reads it (the wake's, WakeDue's same test). A message
// that came during the drive and was read by it (at a tool-result
// boundary, or by the drive's awaitQueue) leaves unread set with the
// queue empty: the drive's end clears it and tells, or a busy receiver
// would never send the notice it owes (relay10). A one-shot session
// (print mode) reads no more messages once its drive ends.
func (s *Session) startDrive() {
	s.inbound.mu.Lock()
	defer s.inbound.mu.Unlock()
	s.inbound.driving, s.inbound.unread = true, false
}

// lastLook ends a one-shot session's drive that found nothing more to
// do, closing its inbox in the same step: under the lock enqueueInbound
// holds, either a message reached the lead's queue since the drive last
// looked (it is returned, and the drive reads it) or none did and every
// later one is refused (errAnswered). A message is read or refused, never
// accepted and dropped. Other sessions get nil: they stay open.
func (s *Session) lastLook() []engine.Part {
	s.inbound.mu.Lock()
	defer s.inbound.mu.Unlock()
	if !s.Plan.Session.StopAfterRun || s.inbound.wake != nil {
		return nil
	}
	if q := s.lead.Queue(); q.Len() > 0 {
		return crew.QueueParts(q.Take())
	}
	s.inbound.answered = true
	return nil
}

func (s *Session) endDrive(state string) {
	s.inbound.mu.Lock()
	s.inbound.driving = false
	exited := state == "has exited"
	if s.Plan.Session.StopAfterRun && s.inbound.wake == nil {
		s.inbound.answered = true
	}
	if !exited && !s.inbound.answered && s.inbound.unread && s.lead.Queue().Len() > 0 {
		s.inbound.mu.Unlock()
		return
	}
	s.inbound.unread = false // read by this drive (a boundary, or its awaitQueue)
	subs, sent := s.inbound.idleSubs, s.inbound.sent
	s.inbound.idleSubs, s.inbound.sent = nil, nil
	s.inbound.mu.Unlock()
	s.tellIdle(context.Background(), subs, state, sent)
}

// tellIdle sends the idle notice to each subscriber (or, for a message a
// person there refused, that it was not taken), each bounded by
// idleNoticeWait; a subscriber that is gone is skipped. One in read sent
// a message that reached the queue: its notice says it was read. The
// notice comes from "uds:<socket>", as this session's messages and the
// send's result name it, so the model matches one to the other.
func (s *Session) tellIdle(ctx context.Context, subs []string, state string, read map[string]bool) {
	for _, path := range subs {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), idleNoticeWait)
		text := fmt.Sprintf(idleNoticeTag+" The session at uds:%s %s: it has finished its turn and nothing waits for it. This notice is sent once; ask again with notify_when_idle to hear of its next idle.", s.socket, state)
		switch {
		case read[path] && state == "is idle":
			text = fmt.Sprintf(idleNoticeTag+" The session at uds:%s has read your message and is idle: it has finished the turn that read it and nothing waits for it. This notice is sent once; ask again with notify_when_idle to hear of its next idle.", s.socket)
		case state == "has exited":
			text = fmt.Sprintf(idleNoticeTag+" The session at uds:%s has exited; it will not answer.", s.socket)
		case strings.HasPrefix(state, "did not take"):
			text = fmt.Sprintf(idleNoticeTag+" The session at uds:%s %s; nothing more will come of it.", s.socket, state)
		}
		if _, err := sessionsock.Send(ctx, path, mailbox.Message{From: "uds:" + s.socket, Text: text}); err != nil {
			s.logf("idle notice to %s: %v", path, err)
		}
		cancel()
	}
}
