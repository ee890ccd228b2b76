package team

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestInProcessTeam runs a lead with two in-process teammates: they
// message each other and the lead, and the run ends with both shut down.
func TestInProcessTeam(t *testing.T) {
	t.Parallel()
	rec := &clitest.Seen{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "alice-task"):
			rec.Add("alice", r.LastUserText())
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "bob", "message": "hi bob, alice here", "summary": "greeting"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "alice: greeted bob"})}}
			}
			return fakeapi.TextReply("alice done")
		case strings.Contains(first, "bob-task"):
			rec.Add("bob", r.LastUserText())
			if strings.Contains(r.LastUserText(), "hi bob, alice here") && !strings.Contains(rec.All("bob-replied"), "yes") {
				rec.Add("bob-replied", "yes")
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "bob: alice said hi"})}}
			}
			return fakeapi.TextReply("bob idle")
		case strings.Contains(first, "run the team"):
			rec.Add("lead", r.LastUserText())
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "crew", "description": "test team"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "alice", "team_name": "crew", "name": "alice", "prompt": "alice-task: greet bob"}),
					clitest.Use("Agent", map[string]any{"description": "bob", "team_name": "crew", "name": "bob", "prompt": "bob-task: wait for alice"}),
				}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	out, errOut, code := h.Run("-p", "run the team", "--output-format", "json", "--teammate-mode", "in-process")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lead := rec.All("lead")
	for _, want := range []string{"alice: greeted bob", "bob: alice said hi", `from="alice"`, `from="bob"`} {
		if !strings.Contains(lead, want) {
			t.Fatalf("the lead never saw %q; it saw:\n%s", want, lead)
		}
	}
	if n := strings.Count(rec.All("bob"), "hi bob, alice here"); n < 1 {
		t.Fatalf("bob never got alice's message")
	}
	active := clitest.MemberActive(h.TeamConfig("crew"))
	if active["alice"] || active["bob"] {
		t.Fatalf("teammates still active after the run: %v", active)
	}
	if _, ok := active["team-lead"]; !ok {
		t.Fatalf("team file lacks the lead: %v", active)
	}
}
