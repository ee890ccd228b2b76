package bg

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestTwoFanOutsInTheBackground: two --bg sessions run a fan-out each at
// once; agents --json lists both with state and cost, logs shows each
// one's answer, stop ends one (gone from the list, listed with --all as
// stopped), and a SIGKILLed one is listed as dead.
func TestTwoFanOutsInTheBackground(t *testing.T) {
	t.Parallel()
	conv := clitest.NewConv()
	fanOut(conv, "alpha")
	fanOut(conv, "beta")
	h := newHarness(t, conv.Policy)
	a := startBG(t, h, "lead alpha: fan out")
	b := startBG(t, h, "--name", "second job", "lead beta: fan out")
	for _, id := range []string{a, b} {
		waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	}
	recs := list(t, h)
	for id, tag := range map[string]string{a: "alpha", b: "beta"} {
		r, ok := byID(recs, id)
		if !ok {
			t.Fatalf("agents --json lacks %s: %+v", id, recs)
		}
		if !r.Alive || r.Status != bgsession.StatusIdle || r.CostUSD <= 0 || r.Agents != 2 || r.SessionID == "" || r.PID == 0 {
			t.Errorf("session %s: want alive, idle, a cost, 2 agents, a sessionId and pid: %+v", id, r)
		}
		out, errOut, code := h.Run("logs", id)
		if code != 0 || !strings.Contains(out, "answer "+tag) {
			t.Errorf("logs %s: exit %d, want the answer %q:\n%s\n%s", id, code, "answer "+tag, out, errOut)
		}
	}
	if r, _ := byID(recs, b); r.Name != "second job" {
		t.Errorf("--name: got %q", r.Name)
	}
	// The name part picks b.
	if out, errOut, code := h.Run("stop", "second"); code != 0 || !strings.Contains(out, "stopped · "+b) {
		t.Fatalf("stop second: exit %d\n%s\n%s", code, out, errOut)
	}
	stopped, _ := byID(list(t, h, "--all"), b)
	if stopped.Alive || stopped.State != bgsession.StateStopped || clitest.ProcessRunning(stopped.PID) {
		t.Fatalf("after stop: %+v (process running: %v)", stopped, clitest.ProcessRunning(stopped.PID))
	}
	if _, ok := byID(list(t, h), b); ok {
		t.Fatalf("a stopped session is listed without --all")
	}
	// SIGKILL: nothing of the session gets to say it ended.
	ra, _ := byID(recs, a)
	if err := syscall.Kill(ra.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	dead := waitFor(t, h, a, "dead", func(r bgsession.Record) bool { return r.State == bgsession.StateDead })
	if dead.Alive {
		t.Fatalf("a killed session is alive: %+v", dead)
	}
	if _, errOut, code := h.Run("stop", a); code != 1 || !strings.Contains(errOut, "is not running (dead)") {
		t.Fatalf("stop of a dead session: exit %d, want 1 and why:\n%s", code, errOut)
	}
}

// TestBadQueries: an unknown id and an ambiguous name part each list the
// candidates; a corrupt record is named by path and skipped.
func TestBadQueries(t *testing.T) {
	t.Parallel()
	conv := clitest.NewConv()
	conv.On("lead", clitest.Text("ok"))
	h := newHarness(t, conv.Policy)
	a := startBG(t, h, "--name", "fix docs", "lead one")
	b := startBG(t, h, "--name", "fix tests", "lead two")
	for _, id := range []string{a, b} {
		waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	}
	_, errOut, code := h.Run("logs", "nosuch")
	if code != 1 || !strings.Contains(errOut, `no background session matches "nosuch"`) || !strings.Contains(errOut, a) || !strings.Contains(errOut, b) {
		t.Errorf("unknown id: exit %d, want 1 and both candidates:\n%s", code, errOut)
	}
	_, errOut, code = h.Run("stop", "fix")
	if code != 1 || !strings.Contains(errOut, "matches 2 sessions") || !strings.Contains(errOut, "fix docs") || !strings.Contains(errOut, "fix tests") {
		t.Errorf("ambiguous name: exit %d, want 1 and both candidates:\n%s", code, errOut)
	}
	bad := filepath.Join(h.Vars["COHORT_HOME"], "bg", "deadbeef.json")
	if err := os.WriteFile(bad, []byte("{\"id\": \"deadbeef\",\n  \"pid\": oops}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := h.Run("agents", "--json")
	if code != 0 || !strings.Contains(errOut, bad) || !strings.Contains(errOut, bad+":2:") || !strings.Contains(out, a) {
		t.Errorf("corrupt record: exit %d, want the others listed and the file named with its line:\n%s\n%s", code, out, errOut)
	}
}

// TestBgFlagsNeedBg: --bg's own flags (the session's name, its worktree)
// without --bg are a usage error before any model call, not silently
// unused (relay10: `cohort -p -n reviewer2` ran a session no one could
// reach by that name).
func TestBgFlagsNeedBg(t *testing.T) {
	t.Parallel()
	conv := clitest.NewConv()
	conv.On("hello", clitest.Text("ok"))
	h := newHarness(t, conv.Policy)
	for _, line := range [][]string{
		{"-p", "-n", "reviewer2", "hello"},
		{"-p", "--name=reviewer2", "hello"},
		{"-p", "-w", "hello"},
		{"--worktree", "fix", "-p", "hello"},
		{"-n", "reviewer2", "hello"}, // the terminal UI's line
	} {
		_, errOut, code := h.Run(line...)
		if code != 2 || !strings.Contains(errOut, "needs --bg") {
			t.Errorf("%q: exit %d, want 2 and why:\n%s", line, code, errOut)
		}
	}
	if n := len(h.Srv.Requests()); n != 0 {
		t.Errorf("%d model requests after refused command lines", n)
	}
	if out, errOut, code := h.Run("-p", "hello"); code != 0 || strings.TrimSpace(out) != "ok" {
		t.Errorf("print mode without them: exit %d\n%s\n%s", code, out, errOut)
	}
}
