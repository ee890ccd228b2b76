package bg

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// sayPolicy answers a lead whose first prompt is "lead TAG: …" with
// "answer TAG", and a prompt holding "after attach" with "attached TAG".
func sayPolicy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	for _, tag := range []string{"one", "two", "three"} {
		if !strings.Contains(first, "lead "+tag+":") {
			continue
		}
		if strings.Contains(r.LastUserText(), "after attach") {
			return fakeapi.TextReply("attached " + tag)
		}
		return fakeapi.TextReply("answer " + tag)
	}
	return fakeapi.TextReply("no script for this prompt")
}

// selectedRow is the pane's line with the sessions view's selection mark.
func selectedRow(scr string) string {
	for l := range strings.Lines(scr) {
		if strings.Contains(l, "▸") {
			return l
		}
	}
	return ""
}

// TestAgentsViewInTmux: cohort agents on a terminal is the live view. It
// lists two background sessions; x stops the selected one; n takes a
// prompt typed in the view and starts a session that then appears; Enter
// attaches to a session (the terminal UI, which answers a prompt there),
// and leaving the UI comes back to the view with the session still
// running.
func TestAgentsViewInTmux(t *testing.T) {
	t.Parallel()
	h := newHarness(t, sayPolicy)
	bin := clitest.BuildBinary(t)
	done := func(r bgsession.Record) bool { return r.State == bgsession.StateDone && r.Alive }
	one := startBG(t, h, "lead one: say it")
	two := startBG(t, h, "lead two: say it")
	waitFor(t, h, one, "done", done)
	waitFor(t, h, two, "done", done)

	tm := newTmux(t)
	tm.start(h, "sh", "-c", `"$@"; echo "exit $?"; exec sleep 600`, "sh", bin, "--cwd", h.Dir, "agents")
	scr := tm.screenShows("Sessions on this machine · 2 running", one, two, "✓ done", "answer two")
	if row := selectedRow(scr); !strings.Contains(row, two) {
		t.Fatalf("the newest session is not selected first: %q\n%s", row, scr)
	}
	tm.run("send-keys", "-t", "0", "x")
	waitFor(t, h, two, "stopped", func(r bgsession.Record) bool { return r.State == bgsession.StateStopped && !r.Alive })
	tm.screenShows("stopped · "+two, "1 running")

	tm.run("send-keys", "-t", "0", "n")
	tm.screenShows("new background session in ")
	tm.run("send-keys", "-t", "0", "-l", "lead three: say it")
	tm.run("send-keys", "-t", "0", "Enter")
	var three string
	if !clitest.WaitFor(60*time.Second, func() bool {
		for _, r := range list(t, h, "--all") {
			if r.Intent == "lead three: say it" {
				three = r.ID
			}
		}
		return three != ""
	}) {
		t.Fatalf("n started no session:\n%s", tm.run("capture-pane", "-p", "-t", "0"))
	}
	waitFor(t, h, three, "done", done)
	tm.screenShows(three, "2 running", "answer three")

	if !clitest.WaitFor(30*time.Second, func() bool {
		if strings.Contains(selectedRow(tm.run("capture-pane", "-p", "-t", "0")), one) {
			return true
		}
		tm.run("send-keys", "-t", "0", "Down")
		return false
	}) {
		t.Fatalf("Down never selected %s:\n%s", one, tm.run("capture-pane", "-p", "-t", "0"))
	}
	tm.run("send-keys", "-t", "0", "Enter")
	tm.screenShows("default mode")
	tm.run("send-keys", "-t", "0", "-l", "after attach")
	tm.run("send-keys", "-t", "0", "Enter")
	tm.screenShows("attached one")
	tm.run("send-keys", "-t", "0", "C-d")
	scr = tm.screenShows("Sessions on this machine · 2 running", one, three)
	if row := selectedRow(scr); !strings.Contains(row, one) {
		t.Fatalf("back from attach, the attached session is not selected: %q\n%s", row, scr)
	}
	if r := waitFor(t, h, one, "listed", func(bgsession.Record) bool { return true }); !r.Alive {
		t.Fatalf("detaching ended the session: %+v", r)
	}
	tm.run("send-keys", "-t", "0", "q")
	tm.screenShows("exit 0")
}
