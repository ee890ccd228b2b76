package binary

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestResumedLeadLearnsOfKilledAgentsFirst is issue 37 item 9: the lead is
// SIGKILLed while its background agent's Bash call runs; on --continue the
// agent's killed notification is in the first request, before the user's
// new prompt, and its <result> says in words what the agent had said and
// done — never the transcript's JSON.
func TestResumedLeadLearnsOfKilledAgentsFirst(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "BGTALLY") && r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("Counted 3 apples so far; pears next."),
				clitest.Use("Bash", map[string]any{"command": "echo started > started.txt; sleep 42", "description": "count pears slowly"})}}
		case strings.Contains(first, "BGTALLY"):
			return fakeapi.TextReply("never reached")
		case !strings.Contains(first, "LEADKILL"):
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "tally fruit",
				"prompt": "BGTALLY count the fruit", "subagent_type": "general-purpose", "run_in_background": true})}}
		}
		return fakeapi.TextReply("noted: " + r.LastUserText())
	})
	lead := clitest.StartBinary(t, h, bin, "-p", "LEADKILL tally the fruit", "--allowedTools", "Bash", "--cwd", h.Dir)
	started := func() bool {
		_, err := os.Stat(filepath.Join(h.Dir, "started.txt"))
		return err == nil
	}
	if !clitest.WaitFor(30*time.Second, started) {
		t.Fatalf("the background agent's Bash call never ran\nstderr: %s", lead.Stderr.String())
	}
	if err := lead.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-lead.Exited
	out, errOut, code := h.Run("-p", "RESUMED what happened", "--continue", "--cwd", h.Dir)
	if code != 0 {
		t.Fatalf("resume: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	var resumed *fakeapi.Request
	for _, r := range clitest.ConvRequests(h.Srv, "LEADKILL") {
		if messageHas(r, "RESUMED") {
			resumed = r
			break
		}
	}
	if resumed == nil {
		t.Fatalf("no request carried the resumed prompt\nstderr: %s", errOut)
	}
	last := resumed.Messages[len(resumed.Messages)-1]
	notice, prompt := -1, -1
	var result string
	for i, b := range last.Content {
		switch {
		case strings.Contains(b.Text, "<task-notification>") && strings.Contains(b.Text, "tally fruit"):
			notice = i
			result = clitest.NoticeField(b.Text, "result")
		case strings.Contains(b.Text, "RESUMED what happened"):
			prompt = i
		}
	}
	if notice < 0 || prompt < 0 || notice > prompt {
		t.Fatalf("the first resumed request's last message must hold the killed notice before the prompt (notice at %d, prompt at %d):\n%+v", notice, prompt, last.Content)
	}
	for _, want := range []string{"Counted 3 apples so far; pears next.", "Bash (count pears slowly)"} {
		if !strings.Contains(result, want) {
			t.Errorf("the killed notice's result lacks %q:\n%s", want, result)
		}
	}
	if strings.Contains(result, `{"`) {
		t.Errorf("the killed notice's result quotes transcript JSON:\n%s", result)
	}
}

// messageHas reports whether any user text of r contains s.
func messageHas(r *fakeapi.Request, s string) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if strings.Contains(b.Text, s) {
				return true
			}
		}
	}
	return false
}
