package bg

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// fanOut is a policy under which a lead whose prompt holds tag starts two
// subagents at once and answers "answer <tag>" with what they said.
func fanOut(conv *clitest.Conv, tag string) {
	conv.On("lead "+tag,
		clitest.Calls(
			clitest.Use("Agent", map[string]any{"description": "one", "prompt": "sub " + tag + "-1: report"}),
			clitest.Use("Agent", map[string]any{"description": "two", "prompt": "sub " + tag + "-2: report"})),
		clitest.Text("answer "+tag))
	conv.On("sub "+tag+"-1", clitest.Text(tag+"-1 done"))
	conv.On("sub "+tag+"-2", clitest.Text(tag+"-2 done"))
}

// newHarness is a harness with a short COHORT_HOME (socket paths) whose
// cleanup kills every background session the test started.
func newHarness(t *testing.T, policy fakeapi.Policy) *clitest.Harness {
	t.Helper()
	h := clitest.New(t, policy)
	h.ShortHome()
	t.Cleanup(func() {
		reg, err := bgsession.Open(h.Vars["COHORT_HOME"])
		if err != nil {
			return
		}
		recs, _ := reg.List()
		for _, r := range recs {
			_ = reg.Stop(context.Background(), r, true)
		}
	})
	return h
}

// startBG runs cohort --bg on the built binary and returns the id it
// printed.
func startBG(t *testing.T, h *clitest.Harness, args ...string) string {
	t.Helper()
	out, errOut, code := h.RunBinary(append([]string{"--bg"}, args...)...)
	if code != 0 {
		t.Fatalf("cohort --bg: exit %d\n%s\n%s", code, out, errOut)
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(out), "backgrounded · ")
	if !ok || len(id) != 8 {
		t.Fatalf("cohort --bg printed %q, want backgrounded · <8-hex id>", out)
	}
	return id
}

// list runs cohort agents --json (with more args) in-process.
func list(t *testing.T, h *clitest.Harness, args ...string) []bgsession.Record {
	t.Helper()
	out, errOut, code := h.Run(append([]string{"agents", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("agents --json: exit %d\n%s", code, errOut)
	}
	var recs []bgsession.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("agents --json is not a JSON array of sessions: %v\n%s", err, out)
	}
	return recs
}

func byID(recs []bgsession.Record, id string) (bgsession.Record, bool) {
	for _, r := range recs {
		if r.ID == id {
			return r, true
		}
	}
	return bgsession.Record{}, false
}

// waitFor waits until the session id, as agents --json --all lists it,
// satisfies cond.
func waitFor(t *testing.T, h *clitest.Harness, id, what string, cond func(bgsession.Record) bool) bgsession.Record {
	t.Helper()
	reg, err := bgsession.Open(h.Vars["COHORT_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	var last bgsession.Record
	ok := clitest.WaitFor(60*time.Second, func() bool {
		recs, _ := reg.Sessions(t.Context(), true)
		r, found := byID(recs, id)
		last = r
		return found && cond(r)
	})
	if !ok {
		out, _, _ := h.Run("logs", id)
		t.Fatalf("session %s never became %s; last record %+v\nlog:\n%s", id, what, last, out)
	}
	return last
}
