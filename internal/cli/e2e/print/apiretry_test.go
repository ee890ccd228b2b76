package print

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAnUnreachableAPIFailsFastNamingTheURL is issue 17 item 11: with
// ANTHROPIC_BASE_URL at a port where nothing listens, the run fails at once
// and says where it looked, instead of 146 s of silence.
func TestAnUnreachableAPIFailsFastNamingTheURL(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("unused") })
	h.Vars["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
	out, errOut, code := h.Run("-p", "say hi")
	if code != 1 || !strings.Contains(errOut, "nothing listens at http://127.0.0.1:9 (connection refused)") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// TestRetriesAreReportedOnStderrAsTheyHappen: in text mode every retry is
// a line on stderr, verbose or not.
func TestRetriesAreReportedOnStderrAsTheyHappen(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply {
		if n.Add(1) == 1 {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.Overloaded}}
		}
		return fakeapi.TextReply("hi")
	})
	out, errOut, code := h.Run("-p", "say hi")
	want := "cohort: API error at " + h.Srv.URL + " (529 Overloaded); retry 2/10 in "
	if code != 0 || strings.TrimSpace(out) != "hi" || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nwant stderr to contain %q", code, out, errOut, want)
	}
}
