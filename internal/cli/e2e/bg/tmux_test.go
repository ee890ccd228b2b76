package bg

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// tmuxServer is a private tmux server; cleanup kills it.
type tmuxServer struct {
	t    *testing.T
	sock string
}

func newTmux(t *testing.T) *tmuxServer {
	t.Helper()
	clitest.NeedTmux(t)
	dir, err := os.MkdirTemp("", "cb")
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxServer{t: t, sock: filepath.Join(dir, "s")}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-S", s.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return s
}

func (s *tmuxServer) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// start runs argv in a new detached session of the server, in h's
// environment.
func (s *tmuxServer) start(h *clitest.Harness, argv ...string) {
	s.t.Helper()
	cmd := append([]string{"new-session", "-d", "-x", "110", "-y", "32", "-c", h.Dir, "--", "env"}, h.Environ()...)
	cmd = append(cmd, "TERM=xterm-256color")
	s.run(append(cmd, argv...)...)
}

// screenShows waits until the pane shows every string of want (tmux tells
// no one when a pane changes, so it looks again every 50 ms, for at most
// 60 s).
func (s *tmuxServer) screenShows(want ...string) string {
	s.t.Helper()
	var scr string
	ok := clitest.WaitFor(60*time.Second, func() bool {
		scr = s.run("capture-pane", "-p", "-t", "0")
		for _, w := range want {
			if !strings.Contains(scr, w) {
				return false
			}
		}
		return true
	})
	if !ok {
		s.t.Fatalf("the pane never showed %q; it shows:\n%s", want, scr)
	}
	return scr
}

// TestSurvivesItsTerminal: a session started with --bg from a tmux pane
// outlives the tmux server (its terminal killed), and dies with stop.
func TestSurvivesItsTerminal(t *testing.T) {
	t.Parallel()
	conv := clitest.NewConv()
	fanOut(conv, "gamma")
	h := newHarness(t, conv.Policy)
	bin := clitest.BuildBinary(t)
	idFile := filepath.Join(t.TempDir(), "id")
	tm := newTmux(t)
	tm.start(h, "sh", "-c", `"$0" --cwd "$1" --bg "lead gamma: fan out" > "$2"; exec sleep 600`, bin, h.Dir, idFile)
	var id string
	if !clitest.WaitFor(60*time.Second, func() bool {
		data, _ := os.ReadFile(idFile)
		id, _ = strings.CutPrefix(strings.TrimSpace(string(data)), "backgrounded · ")
		return len(id) == 8
	}) {
		t.Fatalf("cohort --bg printed no id in the pane")
	}
	tm.run("kill-server")
	r := waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	if !r.Alive {
		t.Fatalf("the session died with its terminal: %+v", r)
	}
	if out, errOut, code := h.Run("stop", id); code != 0 {
		t.Fatalf("stop: exit %d\n%s\n%s", code, out, errOut)
	}
	if clitest.ProcessRunning(r.PID) {
		t.Fatalf("pid %d still runs after stop", r.PID)
	}
}

// TestPermissionWaitsThenAttachReopens: a background session's permission
// prompt waits (listed as waiting, the file not written: never approved on
// its own); after the session is killed (SIGKILL) it is listed as dead,
// and attach reopens its conversation from the transcript in the terminal
// UI: the next prompt goes to the model after the first one.
func TestPermissionWaitsThenAttachReopens(t *testing.T) {
	t.Parallel()
	// The server may answer a request before the harness's directory is
	// known (the policy runs on its goroutines): target is set once,
	// under its own pointer.
	var targetP atomic.Pointer[string]
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "after attach") {
			return fakeapi.TextReply("history opens with: " + r.FirstUserText())
		}
		target := ""
		if p := targetP.Load(); p != nil {
			target = *p
		}
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{"file_path": target, "content": "x"})}}
	}
	h := newHarness(t, policy)
	target := filepath.Join(h.Dir, "asked.txt")
	targetP.Store(&target)
	id := startBG(t, h, "lead delta: write a file")
	r := waitFor(t, h, id, "waiting", func(r bgsession.Record) bool { return r.Status == bgsession.StatusWaiting })
	if r.State != bgsession.StateBlocked || !strings.Contains(r.Detail, "Write") {
		t.Fatalf("a waiting prompt: %+v", r)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("the Write ran without an answer")
	}
	if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, id, "dead", func(r bgsession.Record) bool { return r.State == bgsession.StateDead })
	tm := newTmux(t)
	// The shell keeps the pane after cohort ends, so that a failure shows.
	tm.start(h, "sh", "-c", `"$@"; echo "exit $?"; exec sleep 600`, "sh", clitest.BuildBinary(t), "--cwd", h.Dir, "attach", id)
	tm.screenShows("default mode")
	tm.run("send-keys", "-t", "0", "-l", "after attach")
	tm.run("send-keys", "-t", "0", "Enter")
	tm.screenShows("history opens with:", "lead delta: write a file")
}
