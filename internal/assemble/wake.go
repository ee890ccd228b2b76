package assemble

import (
	"context"
)

// The wake: a session whose front end stays to show it (a terminal UI, a
// background session, an SDK or stream-json session) starts a turn of its own
// when a message from another session reaches its idle lead, as
// SendMessage promises ("or wake it when it is idle") and package
// sessionsock's priorities describe. The front end only says it allows
// it and shows the turn's events (cohort.Config.Wake); the decision to
// start and the loop are here, the same for every front end.
//
// A turn ends its lead's drive only once its queue is empty, so a message
// that arrives while a turn runs is read by that turn (now and next at
// its next step; later when the running turn ends, as a turn of its
// own). What arrives once the drive has looked for the last time, or
// while the session is idle, kicks the wake loop; so does the end of
// every Run, in case a kick came while it was finishing. The loop starts
// a Run with an empty prompt (the lead works on what waits) when such a
// message waits unread and no Turn runs (other things that wait between
// Runs, such as a notification after an interrupt, wake nothing).
//
// The contract with the front end: the wake's Run either is a turn on a
// message that waits, or is no turn at all. It asks WakeDue again as it
// begins, under the lock that lets one Run go at a time; when a Run of
// the person's began first (and reads the message, or kicks again at its
// end) or began and ended meanwhile (having read it), the wake's Run
// yields ErrBusy at once and nothing else. A Config.Wake caller never
// sees an empty turn with a result and no input.
//
// Print mode (-p) allows no wake: it ends after its answer, so a message
// that comes once its one drive has ended is refused with a result that
// says so (inbound.go), rather than queued for a turn that never comes.
// The drive closes its inbox in the same step as its last look at the
// queue (lastLook): a message that came before is read by that drive, one
// that comes after is refused; none is accepted and dropped. Its answer
// waits, though, for the idle notices its model asked for with
// notify_when_idle (notices.go), reading what comes meanwhile.

// waker is the loop that starts the wake turns.
type waker struct {
	run    func(ctx context.Context)
	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// SetWake lets the session start its lead's turns itself: run starts one
// Run with an empty prompt and reads it to its end (package cohort's
// Config.Wake), when allowed. It is called once, after Open; the loop
// stops at Close. A teammate session takes its work from its mailbox and
// has no wake.
func (s *Session) SetWake(allowed bool, run func(ctx context.Context)) {
	if !allowed || s.mate != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &waker{run: run, kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	s.inbound.mu.Lock()
	s.inbound.wake = w
	s.inbound.mu.Unlock()
	go func() {
		defer close(w.done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
			}
			if s.WakeDue() {
				w.run(ctx)
			}
		}
	}()
	s.closers = append(s.closers, func() {
		s.inbound.mu.Lock()
		s.inbound.wake = nil
		s.inbound.mu.Unlock()
		cancel()
		<-w.done
	})
	s.Kick() // what came before the wake was set
}

// Kick tells the wake loop that the lead may have work while idle: a
// message was queued, or a Run ended. It never blocks; without a wake it
// does nothing.
func (s *Session) Kick() {
	s.inbound.mu.Lock()
	w := s.inbound.wake
	s.inbound.mu.Unlock()
	if w == nil {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default: // a kick already waits
	}
}

// WakeDue reports whether a wake turn should start: a message from
// another session waits unread in the lead's queue and no Turn is under
// way to read it. The wake's Run asks again as it begins, under the lock
// that lets one Run go at a time (package cohort), and is refused with
// ErrBusy, yielding nothing, when a Run read the message meanwhile.
func (s *Session) WakeDue() bool {
	s.inbound.mu.Lock()
	defer s.inbound.mu.Unlock()
	return !s.inbound.driving && s.inbound.turns == 0 && s.inbound.unread && s.lead.Queue().Len() > 0
}
