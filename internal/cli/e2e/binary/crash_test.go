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

// TestAKilledSessionResumesAnyNumberOfTimes is issue 17 item 7: the lead
// is SIGKILLed while its Bash call sleeps; --continue works twice (the
// first resume writes its repair of the unanswered call into the
// transcript, so the second sends a valid history), and the command that
// was cut short is not run again.
func TestAKilledSessionResumesAnyNumberOfTimes(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !strings.Contains(r.FirstUserText(), "count and sleep") {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
		}
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "echo X >> count.txt; sleep 42"})}}
		}
		return fakeapi.TextReply("resumed " + r.LastUserText())
	})
	lead := clitest.StartBinary(t, h, bin, "-p", "count and sleep", "--allowedTools", "Bash", "--cwd", h.Dir)
	counted := func() bool {
		data, _ := os.ReadFile(filepath.Join(h.Dir, "count.txt"))
		return len(data) > 0
	}
	if !clitest.WaitFor(30*time.Second, counted) {
		t.Fatalf("the Bash call never ran\nstderr: %s", lead.Stderr.String())
	}
	if err := lead.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-lead.Exited
	for i, prompt := range []string{"first resume", "second resume"} {
		out, errOut, code := h.Run("-p", prompt, "--continue", "--cwd", h.Dir)
		if code != 0 || !strings.Contains(out, "resumed") {
			t.Fatalf("resume %d: exit %d\nstdout: %s\nstderr: %s", i+1, code, out, errOut)
		}
		// Only the first resume has a repair to make (and say so).
		warned := strings.Contains(errOut, "marked them interrupted")
		if (i == 0) != warned {
			t.Errorf("resume %d: repaired unanswered calls: %v (only the first may)\n%s", i+1, warned, errOut)
		}
	}
	if got := h.Read("count.txt"); got != "X\n" {
		t.Errorf("count.txt = %q: the cut-short command ran again", got)
	}
}
