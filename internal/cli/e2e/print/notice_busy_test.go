package print

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The two ways relay10 found the idle notice still lost (issue 38): a
// busy background receiver that read the message inside the turn under
// way never sent it, and a follow-up asked before the receiver's idle
// left the sender waiting for a second notice while it dropped the one
// that came.

// hold blocks a model request until release is closed (or the request
// ends), closing entered first, once.
func hold(r *fakeapi.Request, once *sync.Once, entered, release chan struct{}) {
	once.Do(func() { close(entered) })
	select {
	case <-release:
	case <-r.Context().Done():
	}
}

// TestABusyBackgroundReceiverSendsTheIdleNotice: a --bg receiver is in
// the middle of a turn (its model's request held, then a tool call) when
// a print-mode sender's note comes with notify_when_idle; the receiver
// reads the note at the tool-result boundary, inside that same turn, and
// goes idle without answering. The sender gets the notice (a turn of its
// own: no reply came) within seconds, not after COHORT_IDLE_NOTICE_WAIT:
// before the fix the receiver, having read the note in a turn it had not
// started for it, never sent the notice.
func TestABusyBackgroundReceiverSendsTheIdleNotice(t *testing.T) {
	t.Parallel()
	busy, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var sock, readNote string
	var idleAt time.Time
	var saw []string
	rt := &clitest.Router{}
	rt.On("BGREVIEWER", func(r *fakeapi.Request) fakeapi.Reply {
		switch last := r.LastUserText(); {
		case r.Turn() == 0:
			hold(r, &once, busy, release)
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Glob", map[string]any{"pattern": "*.md"})}}
		case strings.Contains(last, "NOTE-9"):
			mu.Lock()
			readNote, idleAt = last, time.Now()
			mu.Unlock()
			return fakeapi.TextReply("read the note")
		default:
			return fakeapi.TextReply("nothing to read")
		}
	})
	rt.On("SENDER9", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			mu.Lock()
			to := "uds:" + sock
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": to,
				"message": "NOTE-9 please read the diff; no answer needed", "notify_when_idle": true})}}
		case 1:
			return fakeapi.TextReply("Sent; I will tell you once it has read it.")
		}
		last := r.LastUserText()
		mu.Lock()
		saw = append(saw, last)
		mu.Unlock()
		if strings.Contains(last, "[Session idle notice]") {
			return fakeapi.TextReply("The reviewer has read the note.")
		}
		return fakeapi.TextReply("noted")
	})
	h := clitest.New(t, rt.Policy)
	h.ShortHome()
	reg, err := bgsession.Open(h.Vars["COHORT_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		recs, _ := reg.List()
		for _, r := range recs {
			_ = reg.Stop(context.Background(), r, true)
		}
	})
	bin := clitest.BuildBinary(t)
	if out, errOut, code := h.RunBinary("--bg", "-n", "reviewer", "--allowedTools", "Glob", "--",
		"BGREVIEWER: look over the docs; read any note from another session that comes meanwhile"); code != 0 {
		t.Fatalf("cohort --bg: exit %d\n%s\n%s", code, out, errOut)
	}
	select {
	case <-busy:
	case <-time.After(60 * time.Second):
		t.Fatal("the --bg receiver never reached its first request")
	}
	var rec bgsession.Record
	if !clitest.WaitFor(30*time.Second, func() bool {
		recs, _ := reg.Sessions(t.Context(), true)
		for _, r := range recs {
			if r.SessionID != "" {
				rec = r
				return true
			}
		}
		return false
	}) {
		t.Fatal("the --bg receiver's record never named its session")
	}
	mu.Lock()
	sock = filepath.Join(h.Vars["COHORT_HOME"], "sessions", rec.SessionID+".sock")
	mu.Unlock()

	s := startSender(t, h, bin, "SENDER9: have the reviewer read the diff and tell me once it has",
		"COHORT_IDLE_NOTICE_WAIT=45s")
	close(release) // the note waits in the receiver's queue, read at the Glob's boundary
	out, errOut := s.done(t, 90*time.Second)
	exited := time.Now()
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(readNote, "NOTE-9") || !strings.Contains(readNote, "<teammate-message") {
		t.Fatalf("the receiver never read the note in its turn (the test's premise); the sender said:\n%s\n%s", out, errOut)
	}
	if strings.TrimSpace(out) != "The reviewer has read the note." || strings.Contains(errOut, "no idle notice came") {
		t.Errorf("the sender should answer the idle notice; stdout %q\nstderr %s\nits model read after its send: %q", out, errOut, saw)
	}
	// The notice names the receiver as its messages and the send's
	// result do: by its uds: address.
	if joined := strings.Join(saw, "\n"); !strings.Contains(joined, "has read your message and is idle") ||
		!strings.Contains(joined, `<teammate-message from="uds:`+sock+`">[Session idle notice]`) {
		t.Errorf("the notice the sender's model read: %q", joined)
	}
	// The wait was 45 s: a notice that came at all came at the receiver's idle.
	t.Logf("the sender exited %s after the receiver's last request", exited.Sub(idleAt).Round(time.Millisecond))
}

// TestAFollowUpAskedOnTheReplyTurnGetsItsNotice: the sender asks a busy
// print-mode reviewer with notify_when_idle, reads its reply as a new
// turn, and on that turn asks a follow-up with notify_when_idle; the
// reviewer reads the follow-up in the same drive and goes idle without
// answering it. The reviewer sends one notice (it tells each subscriber
// once per idle): the sender's model gets it as a turn of its own (the
// reply was to the first message; nothing answered the follow-up), its
// answer is what prints, and stderr neither says the notice came "after
// its reply" nor that none came. Before the fix the sender counted two
// notices, dropped the one as after the reply, and waited for the other.
func TestAFollowUpAskedOnTheReplyTurnGetsItsNotice(t *testing.T) {
	t.Parallel()
	busy, release := make(chan struct{}), make(chan struct{})
	followed, replyHeld := make(chan struct{}), make(chan struct{})
	var once, onceF, onceH sync.Once
	var mu sync.Mutex
	var sock string
	var saw []string
	from := regexp.MustCompile(`from="(uds:[^"]+)"`)
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, last := r.FirstUserText(), r.LastUserText()
		mu.Lock()
		to := "uds:" + sock
		mu.Unlock()
		switch {
		case strings.Contains(first, "FREVIEWER"):
			switch {
			case r.Turn() == 0:
				hold(r, &once, busy, release)
				return fakeapi.TextReply("waiting for notes")
			case strings.Contains(last, "FOLLOW-2"):
				return fakeapi.TextReply("read the follow-up")
			case strings.Contains(last, "NOTE-1"):
				m := from.FindStringSubmatch(last)
				if m == nil {
					return fakeapi.TextReply("no sender to answer in " + last)
				}
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": m[1], "message": "REPLY-1: the diff looks right"})}}
			default: // the reply was sent: its turn stays open until the follow-up is
				hold(r, &onceH, replyHeld, followed)
				return fakeapi.TextReply("answered")
			}
		case strings.Contains(first, "FSENDER"):
			switch {
			case r.Turn() == 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": to,
					"message": "NOTE-1 please review the diff", "notify_when_idle": true})}}
			case r.Turn() == 1:
				return fakeapi.TextReply("Sent; I will tell you what it says.")
			case strings.Contains(last, "REPLY-1"):
				mu.Lock()
				saw = append(saw, last)
				mu.Unlock()
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": to,
					"message": "FOLLOW-2 please also read the tests; no answer needed", "notify_when_idle": true})}}
			case strings.Contains(r.LastToolResultText(), "Sent to the session"):
				onceF.Do(func() { close(followed) })
				return fakeapi.TextReply("It says the diff looks right; I asked it to read the tests and will tell you once it has.")
			}
			mu.Lock()
			saw = append(saw, last)
			mu.Unlock()
			if strings.Contains(last, "[Session idle notice]") {
				return fakeapi.TextReply("The reviewer has read the tests too.")
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
	}
	h := clitest.New(t, policy)
	h.ShortHome()
	bin := clitest.BuildBinary(t)
	mu.Lock()
	sock = filepath.Join(h.Vars["COHORT_HOME"], "sessions", reviewerID+".sock")
	mu.Unlock()
	reviewer := clitest.StartBinary(t, h, bin, "--cwd", h.Dir, "-p", "--session-id", reviewerID,
		"--allowedTools", "SendMessage", "--", "FREVIEWER: wait for notes from other sessions and answer their senders")
	select {
	case <-busy:
	case <-reviewer.Exited:
		t.Fatalf("the reviewer exited before its first request:\n%s", reviewer.Stderr)
	case <-time.After(60 * time.Second):
		t.Fatal("the reviewer never reached its first request")
	}
	s := startSender(t, h, bin, "FSENDER: ask the reviewer, then have it read the tests; tell me its answer and once it has read them")
	close(release)
	select {
	case <-replyHeld:
	case <-s.exited:
		t.Fatalf("the sender exited before the reviewer had sent its reply:\n%s\n%s", s.out.String(), s.errw)
	case <-time.After(60 * time.Second):
		t.Fatalf("the reviewer never sent its reply:\n%s", reviewer.Stderr)
	}
	out, errOut := s.done(t, 90*time.Second)
	mu.Lock()
	joined := strings.Join(saw, "\n")
	mu.Unlock()
	if strings.TrimSpace(out) != "The reviewer has read the tests too." {
		t.Errorf("the sender's answer is %q; want the answer to the notice (its model read after its send: %q)\nstderr %s", out, joined, errOut)
	}
	if !strings.Contains(joined, "REPLY-1") || strings.Count(joined, "[Session idle notice]") != 1 {
		t.Errorf("the sender's model should read the reply, then one notice turn; it read:\n%s", joined)
	}
	for _, wrong := range []string{"after its reply", "sent no idle notice here", "no idle notice came"} {
		if strings.Contains(errOut, wrong) {
			t.Errorf("stderr says %q:\n%s", wrong, errOut)
		}
	}
	select {
	case <-reviewer.Exited:
	case <-time.After(60 * time.Second):
		t.Error("the reviewer did not exit after its answer")
	}
}
