package team

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// recorder keeps what each conversation was shown, by marker.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (r *recorder) add(key, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string][]string{}
	}
	r.seen[key] = append(r.seen[key], s)
}

func (r *recorder) all(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.seen[key], "\n")
}

// TestInProcessTeam runs a lead with two in-process teammates: they
// message each other and the lead, and the run ends with both shut down.
func TestInProcessTeam(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "alice-task"):
			rec.add("alice", r.LastUserText())
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "bob", "message": "hi bob, alice here", "summary": "greeting"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "alice: greeted bob"})}}
			}
			return fakeapi.TextReply("alice done")
		case strings.Contains(first, "bob-task"):
			rec.add("bob", r.LastUserText())
			if strings.Contains(r.LastUserText(), "hi bob, alice here") && !strings.Contains(rec.all("bob-replied"), "yes") {
				rec.add("bob-replied", "yes")
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "bob: alice said hi"})}}
			}
			return fakeapi.TextReply("bob idle")
		case strings.Contains(first, "run the team"):
			rec.add("lead", r.LastUserText())
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
	lead := rec.all("lead")
	for _, want := range []string{"alice: greeted bob", "bob: alice said hi", `from="alice"`, `from="bob"`} {
		if !strings.Contains(lead, want) {
			t.Fatalf("the lead never saw %q; it saw:\n%s", want, lead)
		}
	}
	if n := strings.Count(rec.all("bob"), "hi bob, alice here"); n < 1 {
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
