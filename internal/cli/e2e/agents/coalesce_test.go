package agents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// staggeredRun has the lead start five background agents that finish 100 ms
// apart once its first turn has ended, and returns the lead's requests
// and the run's stderr. The turn has ended when the lead's Stop hook has
// run (the lead waits for notifications right after it): a notification
// that came before would be taken at once, as any that a turn ends with
// are, and the agents' replies being served is not enough on a loaded
// machine, where the lead can take longer than 100 ms to finish its turn.
func staggeredRun(t *testing.T, coalesce string) ([]*fakeapi.Request, string) {
	t.Helper()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	h.Vars["COHORT_NOTIFY_COALESCE"] = coalesce
	stopped := filepath.Join(h.Dir, "lead-stopped")
	h.Write(".cohort/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cat >/dev/null; touch `+stopped+`"}]}]}}`)
	leadIdle := newGate()
	fanOut(rt, "LEAD-late:", "late", "LATE", "report", 5, leadIdle)
	for i := 1; i <= 5; i++ {
		rt.On(fmt.Sprintf("LATE-%d:", i), func(r *fakeapi.Request) fakeapi.Reply {
			if !leadIdle.wait(r.Context()) || !awaitFile(r.Context(), stopped) {
				return fakeapi.TextReply("the lead never ended its first turn")
			}
			select { // finish 100 ms after the previous agent
			case <-time.After(time.Duration(i) * 100 * time.Millisecond):
			case <-r.Context().Done():
			}
			return fakeapi.TextReply(fmt.Sprintf("report %d", i))
		})
	}
	out, errOut, code := h.Run("-p", "LEAD-late: start five agents", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "seen 5 of 5" {
		t.Fatalf("result = %+v", r)
	}
	return clitest.ConvRequests(h.Srv, "LEAD-late:"), errOut
}

// awaitFile waits until path exists, ctx ends or 20 s pass.
func awaitFile(ctx context.Context, path string) bool {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if !pause(ctx, 5*time.Millisecond) {
			return false
		}
	}
}

// Notifications that arrive close together wake an idle lead once: five
// agents finishing 100 ms apart, with a 1 s quiet window, make one turn
// carrying all five, where each would otherwise start a turn of its own.
func TestNotificationsArrivingTogetherMakeOneTurn(t *testing.T) {
	t.Parallel()
	reqs, _ := staggeredRun(t, "1s")
	if len(reqs) != 3 {
		t.Fatalf("the lead made %d requests, want 3 (launch, idle, one turn for all five)", len(reqs))
	}
	if n := len(lastUserNotices(reqs[2])); n != 5 {
		t.Fatalf("the wake-up turn carries %d notifications, want 5", n)
	}
}

// A value that is not a duration is reported, and the run still completes.
func TestBadCoalesceWindowIsReported(t *testing.T) {
	t.Parallel()
	_, errOut := staggeredRun(t, "soon")
	if !strings.Contains(errOut, `COHORT_NOTIFY_COALESCE="soon" is not a duration`) {
		t.Fatalf("no warning about the bad value in stderr:\n%s", errOut)
	}
}
