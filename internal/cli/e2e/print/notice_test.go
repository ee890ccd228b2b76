package print

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The idle notice a print-mode sender asked for (notify_when_idle): the
// sender's model ends its turn to wait, as the send's result tells it to;
// print mode goes on waiting until the notice comes, reads what comes
// meanwhile as new turns, and stops waiting when the other session has
// died or after COHORT_IDLE_NOTICE_WAIT, saying so.

const (
	reviewerID = "5d0f6a52-8f7e-4c1d-9b1e-2f4c6d8a0b17"
	waitsLine  = "print mode waits for the idle notice"
)

// noticeRig is a reviewer session, a print-mode run held in its first
// turn, and senders that message it with notify_when_idle and end their
// turn at once.
type noticeRig struct {
	h       *clitest.Harness
	bin     string
	sock    string // the reviewer's socket
	busy    chan struct{}
	release chan struct{}

	mu       sync.Mutex
	replied  string   // the reviewer's SendMessage result
	senders  []string // what the senders' models read after their send
	reviewer *clitest.Running
}

func newNoticeRig(t *testing.T) *noticeRig {
	g := &noticeRig{busy: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	from := regexp.MustCompile(`from="(uds:[^"]+)"`)
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, last := r.FirstUserText(), r.LastUserText()
		switch {
		case strings.Contains(first, "REVIEWER"):
			switch {
			case r.Turn() == 0:
				once.Do(func() { close(g.busy) })
				select {
				case <-g.release:
				case <-r.Context().Done():
				}
				return fakeapi.TextReply("waiting for notes")
			case strings.Contains(last, "NOTE-7"):
				to := from.FindStringSubmatch(last)
				if to == nil {
					return fakeapi.TextReply("no sender to answer in " + last)
				}
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": to[1], "message": "REPLY-7: the diff looks right"})}}
			default:
				g.mu.Lock()
				g.replied = r.LastToolResultText()
				g.mu.Unlock()
				return fakeapi.TextReply("replied")
			}
		case strings.Contains(first, "SENDER"):
			switch r.Turn() {
			case 0:
				g.mu.Lock()
				sock := g.sock
				g.mu.Unlock()
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "uds:" + sock,
					"message": "NOTE-7 please review the diff", "notify_when_idle": true})}}
			case 1:
				return fakeapi.TextReply("Sent; I will tell you once the reviewer has read it.")
			}
			g.mu.Lock()
			g.senders = append(g.senders, last)
			g.mu.Unlock()
			switch {
			case strings.Contains(last, "REPLY-7"):
				return fakeapi.TextReply("The reviewer answered: the diff looks right.")
			case strings.Contains(last, "[Session idle notice]"):
				return fakeapi.TextReply("The reviewer is idle now.")
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
	}
	g.h = clitest.New(t, policy)
	g.h.ShortHome()
	g.bin = clitest.BuildBinary(t)
	g.mu.Lock() // the policy reads it on the server's goroutines
	g.sock = filepath.Join(g.h.Vars["COHORT_HOME"], "sessions", reviewerID+".sock")
	g.mu.Unlock()
	g.reviewer = clitest.StartBinary(t, g.h, g.bin, "--cwd", g.h.Dir, "-p", "--session-id", reviewerID,
		"--allowedTools", "SendMessage", "--", "REVIEWER: wait for notes from other sessions and answer their senders")
	select {
	case <-g.busy:
	case <-g.reviewer.Exited:
		t.Fatalf("the reviewer exited before its first request:\n%s", g.reviewer.Stderr)
	case <-time.After(60 * time.Second):
		t.Fatal("the reviewer never reached its first request")
	}
	return g
}

// sender is one print-mode run of the sender; waits is closed when its
// stderr says print mode waits for the notice.
type sender struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	errw   *watched
	exited chan struct{}
}

// watched is a stderr that closes seen once it holds want.
type watched struct {
	mu   sync.Mutex
	b    bytes.Buffer
	want string
	seen chan struct{}
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		select {
		case <-w.seen:
		default:
			close(w.seen)
		}
	}
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// send starts a sender with the extra environment env and returns once
// its model has ended its turn and print mode says it waits.
func (g *noticeRig) send(t *testing.T, env ...string) *sender {
	t.Helper()
	return startSender(t, g.h, g.bin, "SENDER: send the reviewer a note and tell me when it has read it", env...)
}

// startSender starts a print-mode run of bin on prompt and returns once
// its model has ended its turn and print mode says it waits.
func startSender(t *testing.T, h *clitest.Harness, bin, prompt string, env ...string) *sender {
	t.Helper()
	s := &sender{cmd: exec.Command(bin, "--cwd", h.Dir, "-p", "--allowedTools", "SendMessage", "--", prompt),
		errw: &watched{want: waitsLine, seen: make(chan struct{})}, exited: make(chan struct{})}
	s.cmd.Env = append(h.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, s.errw
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); <-s.exited })
	select {
	case <-s.errw.seen:
	case <-s.exited:
		t.Fatalf("the sender exited when its model ended its turn, before the notice it asked for (exit %d):\n%s\n%s",
			s.cmd.ProcessState.ExitCode(), s.out.String(), s.errw)
	case <-time.After(60 * time.Second):
		t.Fatalf("the sender never said it waits for the notice:\n%s", s.errw)
	}
	return s
}

// done waits for the sender's exit, within d, and returns its stdout and
// stderr; it must exit 0.
func (s *sender) done(t *testing.T, d time.Duration) (string, string) {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(d):
		t.Fatalf("the sender did not exit within %s:\n%s", d, s.errw)
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the sender exited %d:\n%s\n%s", code, s.out.String(), s.errw)
	}
	return s.out.String(), s.errw.String()
}

// TestPrintModeWaitsForTheIdleNoticeItAskedFor: the reviewer is mid-turn
// when the sender's note comes; the sender's model ends its turn first.
// The sender does not exit: it reads the reviewer's reply as a new turn
// and answers with it; the idle notice that follows the reply starts no
// turn (stderr says it came), so what print mode prints is the answer to
// the reply (relay9: a turn for the notice alone replaced it with "it is
// idle now"); then it exits. The reviewer's reply was delivered (not "no
// such session").
func TestPrintModeWaitsForTheIdleNoticeItAskedFor(t *testing.T) {
	t.Parallel()
	g := newNoticeRig(t)
	s := g.send(t)
	close(g.release)
	out, errOut := s.done(t, 90*time.Second)
	g.mu.Lock()
	saw, replied := strings.Join(g.senders, "\n"), g.replied
	g.mu.Unlock()
	if strings.TrimSpace(out) != "The reviewer answered: the diff looks right." {
		t.Errorf("the sender's answer is %q; its model read after its send:\n%s", out, saw)
	}
	if !strings.Contains(saw, "REPLY-7: the diff looks right") || strings.Contains(saw, "[Session idle notice]") {
		t.Errorf("the sender's model should read the reply and no turn of the notice after it; it read:\n%s", saw)
	}
	if !strings.Contains(errOut, "the session at uds:"+g.sock+" is idle now, after its reply") {
		t.Errorf("stderr does not say the notice came:\n%s", errOut)
	}
	if !strings.Contains(replied, "Message delivered") {
		t.Errorf("the reviewer's reply was not delivered: %q", replied)
	}
	select {
	case <-g.reviewer.Exited:
		if code := g.reviewer.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("the reviewer exited %d:\n%s", code, g.reviewer.Stderr)
		}
	case <-time.After(60 * time.Second):
		t.Error("the reviewer did not exit after its answer")
	}
}

// TestPrintModeStopsWaitingForANoticeThatCannotCome: a sender whose wait
// (COHORT_IDLE_NOTICE_WAIT) is over exits, saying so; a sender whose
// reviewer is killed exits well within its 10-minute wait, saying the
// reviewer has ended. Each gave its answer on stdout.
func TestPrintModeStopsWaitingForANoticeThatCannotCome(t *testing.T) {
	t.Parallel()
	g := newNoticeRig(t)
	out, errOut := g.send(t, "COHORT_IDLE_NOTICE_WAIT=1s").done(t, 60*time.Second)
	if !strings.Contains(errOut, "no idle notice came from the session at uds:"+g.sock+" within 1s") || !strings.Contains(out, "Sent; I will tell you") {
		t.Errorf("a sender whose wait was over:\nstdout %q\nstderr %s", out, errOut)
	}
	s := g.send(t)
	if err := g.reviewer.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-g.reviewer.Exited
	out, errOut = s.done(t, 30*time.Second)
	if !strings.Contains(errOut, "the session at uds:"+g.sock+" has ended (its socket no longer answers)") || !strings.Contains(out, "Sent; I will tell you") {
		t.Errorf("a sender whose reviewer was killed:\nstdout %q\nstderr %s", out, errOut)
	}
}
