package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// woken collects the Runs a session starts itself (Config.Wake): each
// one's events, in order, as one slice on runs.
type woken struct {
	runs chan []Event
	busy chan error
}

func newWoken() *woken { return &woken{runs: make(chan []Event, 8), busy: make(chan error, 8)} }

func (w *woken) wake(run iter.Seq2[Event, error]) {
	var evs []Event
	for ev, err := range run {
		if err != nil {
			w.busy <- err
			return
		}
		evs = append(evs, ev)
	}
	w.runs <- evs
}

// next waits for the next Run the session started itself.
func (w *woken) next(t *testing.T, what string) []Event {
	t.Helper()
	select {
	case evs := <-w.runs:
		if len(evs) == 0 || last(evs).Type != EventResult {
			t.Fatalf("%s: the turn did not end with a result: %+v", what, evs)
		}
		return evs
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no turn started", what)
	}
	return nil
}

// shortHome is a COHORT_HOME short enough for socket paths (107 bytes).
func shortHome(t *testing.T, prefix string) string {
	t.Helper()
	home, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	return home
}

// TestAnotherSessionsMessageWakesAnIdleLead: a session whose front end
// allows it (Config.Wake) starts a turn of its own when a message from
// another session reaches its idle lead, whatever the priority: the
// model's request holds the message though nobody called Run, and the
// front end is handed that Run's events to its result. A later Run of the
// person's own works as before.
func TestAnotherSessionsMessageWakesAnIdleLead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var read []string
	for _, marker := range []string{"NOTE-now", "NOTE-next", "NOTE-later", "typed by the person"} {
		e.rt.on(marker, func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			read = append(read, r.LastUserText())
			mu.Unlock()
			return fakeapi.TextReply("reviewed")
		})
	}
	cfg := e.config()
	cfg.Home = shortHome(t, "wake")
	w := newWoken()
	cfg.Wake = w.wake
	s := e.open(cfg)
	sock := filepath.Join(cfg.Home, "sessions", s.ID()+".sock")
	for i, p := range []string{"now", "next", "later"} {
		_, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "NOTE-" + p + " review the diff"}, sessionsock.Delivery{Priority: p})
		if err != nil {
			t.Fatalf("send %s: %v", p, err)
		}
		evs := w.next(t, "priority "+p)
		if r := last(evs); r.IsError || r.Result != "reviewed" {
			t.Errorf("priority %s: the woken turn's result %+v", p, r)
		}
		mu.Lock()
		if len(read) != i+1 || !strings.Contains(read[i], "NOTE-"+p) {
			t.Errorf("priority %s: the model read %q", p, read)
		}
		mu.Unlock()
	}
	if r := last(collect(t, s, "typed by the person")); r.IsError {
		t.Errorf("a Run after the woken turns: %+v", r)
	}
	select {
	case evs := <-w.runs:
		t.Errorf("an extra woken turn: %+v", evs)
	case err := <-w.busy:
		if !errors.Is(err, ErrBusy) {
			t.Errorf("a woken Run failed: %v", err)
		}
	default:
	}
}

// TestNotifyWhenIdleWaitsForTheMessage: a message that asks to be told
// when the receiver is next idle, sent to an idle session, is answered
// only once the receiver has read it and its turn has ended — never at
// once with a notice that nothing waits while the message does.
func TestNotifyWhenIdleWaitsForTheMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("NOTE-1", func(r *fakeapi.Request) fakeapi.Reply {
		if !g.wait(r) {
			return fakeapi.TextReply("cancelled")
		}
		return fakeapi.TextReply("reviewed")
	})
	cfg := e.config()
	cfg.Home = shortHome(t, "tell")
	w := newWoken()
	cfg.Wake = w.wake
	s := e.open(cfg)
	dir := filepath.Join(cfg.Home, "sessions")
	notices := make(chan string, 4)
	sub, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: dir, SessionID: "sub",
		Handler: func(_ context.Context, m mailbox.Message) error { notices <- m.From + " " + m.Text; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sock := filepath.Join(dir, s.ID()+".sock")
	if _, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "NOTE-1 review this and tell me"},
		sessionsock.Delivery{NotifyIdle: sub.Path()}); err != nil {
		t.Fatal(err)
	}
	g.await(t) // the receiver's model is reading the message
	select {
	case n := <-notices:
		t.Fatalf("a notice came before the receiver had answered the message: %q", n)
	default:
	}
	close(g.open)
	w.next(t, "the message")
	select {
	case n := <-notices:
		if !strings.HasPrefix(n, "uds:"+sock+" [Session idle notice]") || !strings.Contains(n, "has read your message and is idle") {
			t.Errorf("notice %q", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no idle notice after the turn that read the message")
	}
}

// TestPrintModeRefusesMessagesOnceAnswered: a one-shot session (print
// mode: StopAfterRun, no wake) that has given its answer refuses a
// message from another session with a result that says why, rather than
// queueing it for a turn that never comes.
func TestPrintModeRefusesMessagesOnceAnswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("answer once", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("done") })
	cfg := e.config()
	cfg.Home = shortHome(t, "once")
	cfg.StopAfterRun = true
	s := e.open(cfg)
	collect(t, s, "answer once")
	sock := filepath.Join(cfg.Home, "sessions", s.ID()+".sock")
	_, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "too late"}, sessionsock.Delivery{})
	if err == nil || !strings.Contains(err.Error(), "print mode") || !strings.Contains(err.Error(), "not delivered") {
		t.Errorf("a message to a print-mode session that has answered: %v", err)
	}
}

// TestPrintModeReadsAMessageThatComesAsItEnds: a message that reaches a
// print-mode session after its drive has last looked at the queue, but
// before it has closed, is read by that drive: the model gets it and
// answers. It is never accepted and then dropped (issue 38). The test
// holds the window open with the drive's test hook, not a sleep.
func TestPrintModeReadsAMessageThatComesAsItEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	read := make(chan string, 1)
	e.rt.on("answer, then end", func(r *fakeapi.Request) fakeapi.Reply {
		if got := r.LastUserText(); strings.Contains(got, "LATE-NOTE") {
			read <- got
			return fakeapi.TextReply("read the late note")
		}
		return fakeapi.TextReply("done")
	})
	cfg := e.config()
	cfg.Home = shortHome(t, "late")
	cfg.StopAfterRun = true
	s := e.open(cfg)
	sock := filepath.Join(cfg.Home, "sessions", s.ID()+".sock")
	sent := make(chan error, 1)
	var once sync.Once
	s.parts.TestHookLastLook = func() {
		once.Do(func() {
			_, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "LATE-NOTE check the build"}, sessionsock.Delivery{})
			sent <- err
		})
	}
	evs := collect(t, s, "answer, then end")
	if err := <-sent; err != nil {
		t.Fatalf("the message came before the session had answered, so it must be read, but it was refused: %v", err)
	}
	select {
	case got := <-read:
		if !strings.Contains(got, "LATE-NOTE") {
			t.Errorf("the model read %q", got)
		}
	default:
		t.Fatalf("the message was accepted and never read: the run ended with %+v", last(evs))
	}
	if r := last(evs); r.IsError || r.Result != "read the late note" {
		t.Errorf("the run's result %+v; want the answer to the late note", r)
	}
	if _, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "after the end"}, sessionsock.Delivery{}); err == nil || !strings.Contains(err.Error(), "not delivered") {
		t.Errorf("a message after the answer: %v; want refused", err)
	}
}

// TestAWakeWhoseMessageWasReadIsNoTurn: when the person's own Run reads
// the waiting message between the wake's decision and the start of its
// Run, the wake's Run is no turn at all: ErrBusy at once, no events,
// never an empty turn with a result (issue 38). The test's Wake holds
// the window open: it waits before reading its Run.
func TestAWakeWhoseMessageWasReadIsNoTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	read := make(chan string, 2)
	e.rt.on("NOTE-early", func(r *fakeapi.Request) fakeapi.Reply {
		b, _ := json.Marshal(r.Messages)
		read <- string(b)
		return fakeapi.TextReply("read both")
	})
	cfg := e.config()
	cfg.Home = shortHome(t, "empty")
	handed, release := make(chan struct{}, 1), make(chan struct{})
	type outcome struct {
		evs []Event
		err error
	}
	got := make(chan outcome, 1)
	cfg.Wake = func(run iter.Seq2[Event, error]) {
		handed <- struct{}{}
		<-release
		var o outcome
		for ev, err := range run {
			if err != nil {
				o.err = err
				break
			}
			o.evs = append(o.evs, ev)
		}
		got <- o
	}
	s := e.open(cfg)
	var opened sync.Once
	t.Cleanup(func() { opened.Do(func() { close(release) }) }) // before the session's Close, on any failure
	sock := filepath.Join(cfg.Home, "sessions", s.ID()+".sock")
	if _, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "NOTE-early look at this"}, sessionsock.Delivery{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-handed:
	case <-time.After(30 * time.Second):
		t.Fatal("the message started no wake")
	}
	if r := last(collect(t, s, "typed by the person")); r.IsError || r.Result != "read both" {
		t.Fatalf("the person's Run: %+v", r)
	}
	if first := <-read; !strings.Contains(first, "NOTE-early") || !strings.Contains(first, "typed by the person") {
		t.Fatalf("the person's Run did not read the waiting message: %q", first)
	}
	opened.Do(func() { close(release) })
	select {
	case o := <-got:
		if !errors.Is(o.err, ErrBusy) || len(o.evs) != 0 {
			t.Errorf("the wake's Run after its message was read: %d events (%+v), error %v; want ErrBusy and no events", len(o.evs), o.evs, o.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wake's Run did not end")
	}
}
