package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// Print mode and the idle notices its model asked for.
//
// SendMessage's notify_when_idle promises the model one notice when the
// other session is next idle or exits, and tells it not to poll: the
// model ends its turn to wait. A one-shot session (print mode, -p) would
// end there, and the notice, and any reply the other session sends, would
// be refused ("no such session"). So each notice a one-shot session asked
// for and has not had is work still to come, as a background task is
// (awaitQueue): the run waits, and what comes meanwhile (the reply, the
// notice) reaches the model as a new turn, as a late message does. The
// run then ends once nothing else is awaited.
//
// A notice stops being awaited when:
//   - it comes: a message from "uds:<its socket>" whose text starts with
//     idleNoticeTag, counted in the same locked step that queues it
//     (enqueueInbound), so the run cannot end between the two; one that
//     is refused (nobody to approve it) counts too: it came;
//   - the other session's socket no longer answers (it died without
//     sending one, killed; one that exits cleanly closes its socket and
//     then sends "has exited", which a run still going reads);
//   - noticeWaitDefault has passed since print mode started to wait for
//     it, its model's turn over (COHORT_IDLE_NOTICE_WAIT sets it; "0"
//     waits for none).
//
// Each time print mode starts waiting for one, and when it stops waiting
// without it, it says so on stderr (the person's channel; the model has
// given its answer). Sessions that stay after their answer (the terminal
// UI, a background session, an SDK host) count nothing: the notice
// wakes them (wake.go).

// idleNoticeTag begins every idle notice a session sends (tellIdle).
const idleNoticeTag = "[Session idle notice]"

// noticeWaitDefault bounds print mode's wait for one notice.
const noticeWaitDefault = 10 * time.Minute

// awaitedNotice is the notice owed by one other session.
type awaitedNotice struct {
	socket string
	asks   int  // the asks it answers, delivered or being sent
	told   bool // print mode has started to wait for it, and said so
	// replied: a message from that session was queued since it was last
	// asked.
	replied bool
	until   time.Time // when print mode stops waiting, once told
}

// expectNotice records, before the message is sent, that the model asked
// the session listening on socket for an idle notice; the send withdraws
// it when the message was not delivered. Only a one-shot session counts.
//
// One notice is owed per session, however often it was asked before it
// came: the other session keeps each subscriber once and tells it once,
// at its next idle (inbound.go), so a follow-up asked before that idle
// is answered by the same notice. Counting each ask would wait for a
// second notice that never comes (relay10). A new ask resets replied: a
// reply to the earlier message says nothing of the follow-up, so the
// notice after it is the news and gets its turn. A withdrawn ask (not
// delivered) undoes only what it did.
func (s *Session) expectNotice(socket string) (withdraw func()) {
	id := strings.TrimSuffix(filepath.Base(socket), ".sock")
	wait := s.noticeWait()
	s.inbound.mu.Lock()
	defer s.inbound.mu.Unlock()
	if !s.oneShotLocked() || wait <= 0 {
		return func() {}
	}
	if s.inbound.awaiting == nil {
		s.inbound.awaiting = map[string]*awaitedNotice{}
	}
	a := s.inbound.awaiting[id]
	if a == nil {
		a = &awaitedNotice{socket: socket}
		s.inbound.awaiting[id] = a
	}
	a.asks++
	replied := a.replied
	a.replied = false // a reply counts only after the latest ask
	return func() {
		s.inbound.mu.Lock()
		defer s.inbound.mu.Unlock()
		if s.inbound.awaiting[id] != a {
			return // it came meanwhile
		}
		if a.asks--; a.asks <= 0 {
			delete(s.inbound.awaiting, id)
		} else {
			a.replied = a.replied || replied
		}
	}
}

// oneShotLocked reports whether the session ends after its answer (print
// mode): no wake loop starts its turns. s.inbound.mu is held.
func (s *Session) oneShotLocked() bool {
	return s.Plan.Session.StopAfterRun && s.inbound.wake == nil
}

// noticeFrom is the session id of an idle notice m is, or "": one from
// "uds:<sessions dir>/<id>.sock" (tellIdle), or from "session <id>" as an
// older Cohort sent it.
func noticeFrom(m mailbox.Message) string {
	if !strings.HasPrefix(m.Text, idleNoticeTag) {
		return ""
	}
	if id, ok := strings.CutPrefix(m.From, "session "); ok {
		return id
	}
	path, ok := strings.CutPrefix(m.From, "uds:")
	if !ok || !strings.HasSuffix(path, ".sock") {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(path), ".sock")
}

// A notice that comes after the other session's reply starts no turn in
// print mode: the model has the reply (read, or queued to be read), and a
// turn for the notice alone would replace the answer print mode prints
// (what the reply said) with one that says only "it is idle now" (relay9).
// The notice still counts as had, and stderr says it came. With no reply
// before it, the notice is the news, and gets its turn.

// noteReplyLocked records that a message from the session a notice is
// awaited of (from is its "uds:" address) was queued. s.inbound.mu is
// held.
func (s *Session) noteReplyLocked(from string) {
	for _, a := range s.inbound.awaiting {
		if from == "uds:"+a.socket {
			a.replied = true
		}
	}
}

// repliedLocked says whether an idle notice of session id comes after a
// reply of that session to a one-shot session, and its socket.
// s.inbound.mu is held.
func (s *Session) repliedLocked(id string) (socket string, replied bool) {
	a := s.inbound.awaiting[id]
	if a == nil || !s.oneShotLocked() {
		return "", false
	}
	return a.socket, a.replied
}

// noticeCameLocked counts the notice of session id as had.
// s.inbound.mu is held.
func (s *Session) noticeCameLocked(id string) {
	delete(s.inbound.awaiting, id)
}

// noticeCame is noticeCameLocked for a notice that was not queued.
func (s *Session) noticeCame(id string) {
	s.inbound.mu.Lock()
	defer s.inbound.mu.Unlock()
	s.noticeCameLocked(id)
}

// noticesAwaited is how many other sessions print mode still waits for a
// notice from. With probe set it first stops waiting for those whose
// socket no longer answers or whose wait is over, saying so on stderr,
// and says which it starts to wait for (the wait counts from there).
func (s *Session) noticesAwaited(ctx context.Context, probe bool) int {
	s.inbound.mu.Lock()
	awaited := make(map[string]awaitedNotice, len(s.inbound.awaiting))
	for id, a := range s.inbound.awaiting {
		awaited[id] = *a
	}
	s.inbound.mu.Unlock()
	if !probe || len(awaited) == 0 {
		return len(awaited)
	}
	n := len(awaited)
	for id, a := range awaited {
		why := ""
		switch {
		case !answers(ctx, a.socket):
			why = fmt.Sprintf("the session at uds:%s has ended (its socket no longer answers) and sent no idle notice here", a.socket)
		case a.told && time.Now().After(a.until):
			why = fmt.Sprintf("no idle notice came from the session at uds:%s within %s (COHORT_IDLE_NOTICE_WAIT sets how long)", a.socket, s.noticeWait())
		case !a.told:
			fmt.Fprintf(s.Process.Stderr, "cohort: %s asked of the session at uds:%s (at most %s; COHORT_IDLE_NOTICE_WAIT sets how long)\n", waitsForNotice, a.socket, s.noticeWait())
		}
		if why != "" {
			fmt.Fprintf(s.Process.Stderr, "cohort: %s; print mode stops waiting for it\n", why)
			n--
		}
		s.inbound.mu.Lock()
		if cur := s.inbound.awaiting[id]; cur != nil {
			switch {
			case why != "":
				delete(s.inbound.awaiting, id)
			case !cur.told:
				cur.told, cur.until = true, time.Now().Add(s.noticeWait())
			}
		}
		s.inbound.mu.Unlock()
	}
	return n
}

// waitsForNotice begins the line that says print mode waits for a notice.
const waitsForNotice = "print mode waits for the idle notice"

// answers reports whether the session at socket still listens, within a
// second.
func answers(ctx context.Context, socket string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return sessionsock.Answers(ctx, socket)
}

// noticeWait is how long print mode waits for one idle notice:
// COHORT_IDLE_NOTICE_WAIT when set (a duration; "0" waits for none), else
// noticeWaitDefault. A value that is not a duration is reported once and
// the default used.
func (s *Session) noticeWait() time.Duration {
	s.noticeOnce.Do(func() {
		s.noticeD = noticeWaitDefault
		v := s.Process.Getenv("COHORT_IDLE_NOTICE_WAIT")
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: COHORT_IDLE_NOTICE_WAIT=%q is not a duration such as 10m (or 0 not to wait); using %s\n", v, noticeWaitDefault)
			return
		}
		s.noticeD = d
	})
	return s.noticeD
}
