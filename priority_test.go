package cohort

import (
	"context"
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

// TestAnotherSessionsMessagePriority: while the lead's turn waits on the
// model, another process sends three messages to the session's socket:
// "next", "later" and "now", in that order. At the turn's next step the
// model reads the "now" message before the "next" one and not the "later"
// one; the "later" message starts a turn of its own once that turn ends.
// A priority no receiver knows is refused with an error naming the three.
func TestAnotherSessionsMessagePriority(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	var mu sync.Mutex
	var seen []string // the last user text of each request after the first
	e.rt.on("take messages", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			if !g.wait(r) {
				return fakeapi.TextReply("cancelled")
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*.none"})}}
		}
		mu.Lock()
		seen = append(seen, r.LastUserText())
		mu.Unlock()
		return fakeapi.TextReply("read")
	})
	home, err := os.MkdirTemp("", "prio") // a socket path holds 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := e.config()
	cfg.Home = home
	// A person approves each message; the SYNC message, refused, is
	// asked about only once the three before it are in the lead's queue
	// (one question at a time, in arrival order).
	synced := make(chan struct{})
	cfg.CanUseTool = func(_ context.Context, req PermissionRequest) (Decision, error) {
		if req.Tool != "SendMessage" {
			return Decision{Allow: true}, nil
		}
		if strings.Contains(string(req.Input), "SYNC") {
			close(synced)
			return Decision{Message: "not this one"}, nil
		}
		return Decision{Allow: true}, nil
	}
	s := e.open(cfg)
	sock := filepath.Join(home, "sessions", s.ID()+".sock")
	done := make(chan []Event, 1)
	go func() { done <- collect(t, s, "take messages") }()
	g.await(t)
	for _, m := range []struct{ text, priority string }{{"NEXT-1", "next"}, {"LATER-1", "later"}, {"NOW-1", "now"}, {"SYNC", "now"}} {
		if err := sendFromAProgram(t, sock, "peer", m.text, m.priority); err != nil {
			t.Fatalf("send %s: %v", m.text, err)
		}
	}
	err = sendFromAProgram(t, sock, "peer", "x", "urgent")
	if err == nil || !strings.Contains(err.Error(), "use now, next or later") {
		t.Errorf("priority urgent: %v", err)
	}
	<-synced
	close(g.open)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("want two more requests (the step with the messages, the later message's turn); got %q", seen)
	}
	step, later := seen[0], seen[1]
	now, next := strings.Index(step, "NOW-1"), strings.Index(step, "NEXT-1")
	if now < 0 || next < 0 || now > next || strings.Contains(step, "LATER-1") || strings.Contains(step+later, "SYNC") {
		t.Errorf("the turn's next step read %q; want NOW-1 before NEXT-1 and no LATER-1", step)
	}
	if !strings.Contains(later, "LATER-1") || strings.Contains(later, "NOW-1") {
		t.Errorf("the turn after read %q; want LATER-1 alone", later)
	}
}

// TestAnotherSessionAsksToBeToldWhenIdle: a subscription (notify_idle,
// nothing to deliver) that reaches an idle session is answered at once
// with one notice; one that reaches it mid-turn is answered when the turn
// ends, not before, and its text never reaches the model. A notify_idle
// that is not a session socket of this machine is refused, so a message
// cannot make the session connect elsewhere.
func TestAnotherSessionAsksToBeToldWhenIdle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("work a while", func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "asks to be told") {
			t.Errorf("the subscription reached the model: %q", r.LastUserText())
		}
		if !g.wait(r) {
			return fakeapi.TextReply("cancelled")
		}
		return fakeapi.TextReply("worked")
	})
	home, err := os.MkdirTemp("", "idle")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := e.config()
	cfg.Home = home
	s := e.open(cfg)
	dir := filepath.Join(home, "sessions")
	notices := make(chan string, 4)
	sub, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: dir, SessionID: "sub",
		Handler: func(_ context.Context, m mailbox.Message) error { notices <- m.Text; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sock := filepath.Join(dir, s.ID()+".sock")
	subscribe := func(notify string) error {
		_, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "(asks to be told when this session is next idle)"},
			sessionsock.Delivery{NotifyIdle: notify, SubscribeOnly: true})
		return err
	}
	expect := func(what string) {
		t.Helper()
		select {
		case n := <-notices:
			if !strings.Contains(n, "uds:"+sock) || !strings.Contains(n, "is idle") {
				t.Errorf("%s: notice %q", what, n)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no idle notice", what)
		}
	}
	if err := subscribe(sub.Path()); err != nil {
		t.Fatal(err)
	}
	expect("an idle session")
	if err := subscribe(filepath.Join(t.TempDir(), "x.sock")); err == nil || !strings.Contains(err.Error(), "another session's socket") {
		t.Errorf("a notify_idle outside the sessions directory: %v", err)
	}
	done := make(chan []Event, 1)
	go func() { done <- collect(t, s, "work a while") }()
	g.await(t)
	if err := subscribe(sub.Path()); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-notices:
		t.Fatalf("a notice came while the turn ran: %q", n)
	default:
	}
	close(g.open)
	<-done
	expect("the end of the turn")
	select {
	case n := <-notices:
		t.Errorf("a second notice: %q", n)
	default:
	}
}

// TestAnotherSessionsMessageWaitsForAPerson: a message from another
// session reaches the lead only once a person approves it. The person is
// shown who sent what, and a refused message never reaches the model; a
// session nobody can answer for (print mode) refuses every such message,
// whatever its permission mode, and says so to the sender.
func TestAnotherSessionsMessageWaitsForAPerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var texts []string
	e.rt.on("after the messages", func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		texts = append(texts, r.FirstUserText(), r.LastUserText())
		mu.Unlock()
		return fakeapi.TextReply("read")
	})
	home, err := os.MkdirTemp("", "hold")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := e.config()
	cfg.Home = home
	asked := make(chan string, 4)
	cfg.CanUseTool = func(_ context.Context, req PermissionRequest) (Decision, error) {
		asked <- string(req.Input)
		return Decision{Message: "no"}, nil
	}
	s := e.open(cfg)
	sock := filepath.Join(home, "sessions", s.ID()+".sock")
	if err := sendFromAProgram(t, sock, "peer-7", "DENIED-1 run rm -rf", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-asked; !strings.Contains(got, `"from":"peer-7"`) || !strings.Contains(got, "DENIED-1 run rm -rf") {
		t.Errorf("the person was shown %s", got)
	}
	if err := sendFromAProgram(t, sock, "peer-7", "SYNC", ""); err != nil {
		t.Fatal(err)
	}
	<-asked // DENIED-1 has been decided before SYNC is asked about
	collect(t, s, "after the messages")
	mu.Lock()
	if strings.Contains(strings.Join(texts, "\n"), "DENIED-1") || len(texts) == 0 {
		t.Errorf("the model read %q", texts)
	}
	mu.Unlock()

	headless := e.config()
	headless.Home, headless.PermissionMode = home, "bypassPermissions"
	h := e.open(headless)
	err = sendFromAProgram(t, filepath.Join(home, "sessions", h.ID()+".sock"), "peer-7", "hello", "")
	if err == nil || !strings.Contains(err.Error(), "nobody can approve") {
		t.Errorf("a session with nobody to ask took the message: %v", err)
	}
}

// TestMessagesBetweenSessionsThePersonStarted: a session the person
// started (here, opened by the program the person runs) messages another
// through SendMessage, and the message reaches the other lead without a
// question, even in a session nobody could ask; the same words from a
// program that is no session are held there and, with nobody to ask,
// refused.
func TestMessagesBetweenSessionsThePersonStarted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home, err := os.MkdirTemp("", "person")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	receiver := e.config()
	receiver.Home, receiver.PermissionMode = home, "bypassPermissions" // nobody to ask
	b := e.open(receiver)
	sockB := filepath.Join(home, "sessions", b.ID()+".sock")
	var mu sync.Mutex
	var result, read string
	e.rt.on("tell the other session", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "uds:" + sockB, "message": "FROM-A the build is green"})}}
		}
		mu.Lock()
		result = r.LastUserText()
		mu.Unlock()
		return fakeapi.TextReply("sent")
	})
	reader := func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		read += r.FirstUserText() + "\n" + r.LastUserText()
		mu.Unlock()
		return fakeapi.TextReply("read")
	}
	e.rt.on("read your messages", reader)
	e.rt.on("FROM-A", reader) // the queued message may open the conversation
	e.rt.on("FROM-SCRIPT", reader)
	sender := e.config()
	sender.Home = home
	sender.CanUseTool = func(context.Context, PermissionRequest) (Decision, error) { return Decision{Allow: true}, nil }
	a := e.open(sender)
	collect(t, a, "tell the other session")
	mu.Lock()
	if strings.Contains(result, "not delivered") || strings.Contains(result, "nobody can approve") {
		t.Errorf("SendMessage to a session the person started answered %q", result)
	}
	mu.Unlock()
	if err := sendFromAProgram(t, sockB, "script", "FROM-SCRIPT run this", ""); err == nil || !strings.Contains(err.Error(), "nobody can approve") {
		t.Errorf("a program's message to a session nobody can ask: %v", err)
	}
	collect(t, b, "read your messages")
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(read, "FROM-A the build is green") || strings.Contains(read, "FROM-SCRIPT") {
		t.Errorf("the receiving lead read %q; want FROM-A's message and not the script's", read)
	}
}
