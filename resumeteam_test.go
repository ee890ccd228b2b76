package cohort

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAResumedSessionLeadsItsTeamAgain: a session creates team rt1 and
// ends, leaving it orphaned; resumed, it spawns into rt1 and hears the
// teammate without creating the team again (issue 17 item 3).
func TestAResumedSessionLeadsItsTeamAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var heard atomic.Bool
	e.rt.on("BOB-GO", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "team-lead", "summary": "back", "message": "BOB-IS-BACK"})}}
		}
		return fakeapi.TextReply("bob done")
	})
	e.rt.on("make the team", func(r *fakeapi.Request) fakeapi.Reply {
		last := r.LastUserText()
		switch {
		case strings.Contains(last, "BOB-IS-BACK"):
			heard.Store(true)
			return fakeapi.TextReply("heard bob")
		case strings.Contains(last, "spawn bob"):
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "bob", "prompt": "BOB-GO", "name": "bob", "team_name": "rt1"})}}
		case strings.Contains(last, "make the team"):
			return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "rt1"})}}
		}
		return fakeapi.TextReply("ok")
	})
	cfg := e.config()
	cfg.TeammateMode = "in-process"
	first, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	collect(t, first, "make the team")
	id := first.ID()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}

	cfg.Resume = id
	s := e.open(cfg)
	evs := collect(t, s, "spawn bob into rt1")
	if res := last(evs); res.IsError || !heard.Load() {
		t.Fatalf("the resumed lead did not hear bob (error %v): %s", res.IsError, res.Result)
	}
	for _, ev := range evs {
		if ev.Type == EventUser && ev.Message != nil {
			for _, b := range ev.Message.Content {
				if b.Type == "tool_result" && b.IsError {
					t.Errorf("a tool call of the resumed lead failed: %+v", b.Content)
				}
			}
		}
	}
}
