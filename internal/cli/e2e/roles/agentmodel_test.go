package roles

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// saw keeps what a scripted lead was answered, in order.
type saw struct {
	mu      sync.Mutex
	results []string // tool results, in call order
	texts   []string // every new user text
}

func (s *saw) add(r *fakeapi.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results = append(s.results, clitest.ToolResults(r)...)
	s.texts = append(s.texts, newContent(r)...)
}

func (s *saw) all() ([]string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...), strings.Join(s.texts, "\n")
}

// TestClaudeCodeAgentModel runs a lead under Claude Code 2.1.332's model
// (background_agents and implicit_team on): an Agent call without
// run_in_background runs in the background, run_in_background: false
// waits; a name makes a teammate of the session's one team although the
// call names another team and a mode the lead may not grant (both
// ignored); the lead then gives that teammate more work by name, and
// TeamCreate is not a tool it has.
func TestClaudeCodeAgentModel(t *testing.T) {
	t.Parallel()
	lead := &saw{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "cc-bg"):
			return fakeapi.TextReply("bg looked")
		case strings.Contains(first, "cc-sync"):
			return fakeapi.TextReply("sync answered")
		case strings.Contains(first, "cc-bob"):
			if strings.Contains(r.LastUserText(), "cc-more") && r.LastToolResultText() == "" {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "bob took the second job"})}}
			}
			return fakeapi.TextReply("bob waits")
		case strings.Contains(first, "cc-lead"):
			lead.add(r)
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "look", "subagent_type": "general-purpose", "prompt": "cc-bg: look"}),
					clitest.Use("Agent", map[string]any{"description": "answer", "prompt": "cc-sync: answer", "run_in_background": false}),
					clitest.Use("Agent", map[string]any{"description": "join", "name": "bob", "team_name": "other-team", "mode": "bypassPermissions", "prompt": "cc-bob: wait for work"}),
					clitest.Use("TeamCreate", map[string]any{"team_name": "mine"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "bob", "message": "cc-more: a second job"})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
	}
	h := clitest.New(t, policy)
	args := append([]string{"-p", "cc-lead: work the 2.1.332 way", "--teammate-mode", "in-process"}, ccModel.flags...)
	if out, errOut, code := h.Run(args...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	results, texts := lead.all()
	if len(results) < 5 {
		t.Fatalf("the lead got %d tool results, want 5: %q", len(results), results)
	}
	want := []struct{ what, has, lacks string }{
		{"an Agent call without run_in_background", "running in the background", "ERROR"},
		{"an Agent call with run_in_background: false", "sync answered", "ERROR"},
		{"a named Agent call with team_name and mode", "joined team session-", "other-team"},
		{"TeamCreate", "Your tools: ", "created"},
		{"SendMessage to the teammate", "bob", "ERROR"},
	}
	for i, w := range want {
		if !strings.Contains(results[i], w.has) || strings.Contains(results[i], w.lacks) {
			t.Errorf("%s got %q, want %q in it and not %q", w.what, results[i], w.has, w.lacks)
		}
	}
	if !strings.Contains(texts, "bob took the second job") {
		t.Errorf("the teammate did not take work by name; the lead saw:\n%s", texts)
	}
}

// TestSeedAgentModelTakesClaudeCodeCalls: under the seed's model (the
// default) calls written for 2.1.332 work: a name without a team starts a
// named agent and waits for it; a team_name without a name, or with no
// team to join, is ignored and the result says so; an explicit team still
// takes a teammate by team_name and name.
func TestSeedAgentModelTakesClaudeCodeCalls(t *testing.T) {
	t.Parallel()
	lead := &saw{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		for _, who := range []string{"carol", "anon", "dave", "erin"} {
			if strings.Contains(first, "seed-"+who) {
				return fakeapi.TextReply(who + " answered")
			}
		}
		if !strings.Contains(first, "seed-lead") {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
		}
		lead.add(r)
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{
				clitest.Use("Agent", map[string]any{"description": "named", "name": "carol", "prompt": "seed-carol: answer"}),
				clitest.Use("Agent", map[string]any{"description": "team only", "team_name": "crew", "prompt": "seed-anon: answer"}),
				clitest.Use("Agent", map[string]any{"description": "no team", "name": "dave", "team_name": "ghost", "prompt": "seed-dave: answer"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "crew", "description": "d"})}}
		case 2:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "mate", "name": "erin", "team_name": "crew", "prompt": "seed-erin: answer"})}}
		}
		return fakeapi.TextReply("noted")
	}
	h := clitest.New(t, policy)
	if out, errOut, code := h.Run("-p", "seed-lead: mix the models", "--teammate-mode", "in-process"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	results, _ := lead.all()
	if len(results) < 5 {
		t.Fatalf("the lead got %d tool results, want 5: %q", len(results), results)
	}
	want := []struct{ what, has, also string }{
		{"a name without a team", "carol answered", "carol answered"},
		{"a team_name without a name", "anon answered", `team_name "crew" was ignored`},
		{"a team_name with no team", "dave answered", "this session leads no team"},
		{"TeamCreate", "Team crew created", "Team crew created"},
		{"an explicit teammate", "joined team crew", "joined team crew"},
	}
	for i, w := range want {
		if strings.HasPrefix(results[i], "ERROR") || !strings.Contains(results[i], w.has) || !strings.Contains(results[i], w.also) {
			t.Errorf("%s got %q, want %q and %q in it", w.what, results[i], w.has, w.also)
		}
	}
}
