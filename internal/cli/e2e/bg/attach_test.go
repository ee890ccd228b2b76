package bg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAttachLive: a background session whose lead started a background
// agent and then asked to Write waits (status waiting); attach in tmux
// shows the waiting permission prompt and the live tree with the running
// agent; the answer given there lets the Write run; leaving the UI
// detaches and the session goes on.
func TestAttachLive(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var target string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "slow helper"):
			select {
			case <-release:
			case <-r.Context().Done():
				return fakeapi.FaultReply(fakeapi.ServerError)
			case <-time.After(60 * time.Second):
			}
			return fakeapi.TextReply("helper done")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{
				clitest.Use("Agent", map[string]any{"description": "count the pears", "prompt": "slow helper: count", "run_in_background": true}),
				clitest.Use("Write", map[string]any{"file_path": target, "content": "approved\n"}),
			}}
		}
		return fakeapi.TextReply("lead finished")
	}
	h := newHarness(t, policy)
	target = filepath.Join(h.Dir, "approved.txt")
	id := startBG(t, h, "lead zeta: start a helper, then write")
	waitFor(t, h, id, "waiting", func(r bgsession.Record) bool { return r.Status == bgsession.StatusWaiting })
	tm := newTmux(t)
	tm.start(h, "sh", "-c", `"$@"; echo "exit $?"; exec sleep 600`, "sh", clitest.BuildBinary(t), "--cwd", h.Dir, "attach", id)
	tm.screenShows("Permission", "approved.txt")
	tm.run("send-keys", "-t", "0", "-l", "1")
	if !clitest.WaitFor(30*time.Second, func() bool { _, err := os.Stat(target); return err == nil }) {
		t.Fatalf("the answer given on attach did not let the Write run:\n%s", tm.run("capture-pane", "-p", "-t", "0"))
	}
	tm.run("send-keys", "-t", "0", "C-t")
	tm.screenShows("count the pears", "running")
	close(release)
	tm.run("send-keys", "-t", "0", "C-t")
	tm.run("send-keys", "-t", "0", "C-c")
	tm.screenShows("exit 0")
	r := waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	if !r.Alive {
		t.Fatalf("detaching ended the session: %+v", r)
	}
}
