package bg

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRespawn: respawn restarts a running session in a new process under
// the same id, on the same conversation; a bad query and a missing
// argument are refused.
func TestRespawn(t *testing.T) {
	t.Parallel()
	policy := func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("fine") }
	h := newHarness(t, policy)
	id := startBG(t, h, "--name", "renew", "lead theta")
	before := waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	if _, errOut, code := h.Run("respawn"); code != 2 || !strings.Contains(errOut, "--all") {
		t.Errorf("respawn without a session: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := h.Run("respawn", "nosuch"); code != 1 || !strings.Contains(errOut, id) {
		t.Errorf("respawn of an unknown session: exit %d, want the candidates\n%s", code, errOut)
	}
	out, errOut, code := h.RunBinary("respawn", "renew")
	if code != 0 || !strings.Contains(out, "respawned · "+id) {
		t.Fatalf("respawn: exit %d\n%s\n%s", code, out, errOut)
	}
	after := waitFor(t, h, id, "alive again", func(r bgsession.Record) bool {
		return r.Alive && r.PID != before.PID && r.State == bgsession.StateDone
	})
	if after.SessionID != before.SessionID || after.Name != "renew" || clitest.ProcessRunning(before.PID) {
		t.Fatalf("respawned: %+v, before %+v (old process running: %v)", after, before, clitest.ProcessRunning(before.PID))
	}
}
