package clitest

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TeamScenario is the team scenario the in-process and the across-machines
// tests share: the lead makes team Team and tasks #1 alpha, #2 beta and #3
// gamma, and spawns alice and bob. Each claims its own task and, in the
// same turn, #3, so the two race for it: the winner writes gamma.txt and
// completes #3 too. alice writes alpha.txt, completes #1, greets bob and
// reports to the lead; bob writes beta.txt, completes #2 and, whenever
// alice's greeting comes (even beside a tool result before his task is
// done), tells the lead. Rec keeps what each conversation was shown
// ("lead", "alice", "bob"); Claims what each claim answered.
type TeamScenario struct {
	Team string
	Rec  *Seen

	mu     sync.Mutex
	claims map[string][]string // task id → "member: tool result" of each claim
}

// ScenarioMessages are the chat messages of the scenario: text → sender
// and recipient.
var ScenarioMessages = map[string][2]string{
	"hi bob, alice here": {"alice", "bob"},
	"alice: greeted bob": {"alice", "team-lead"},
	"bob: alice said hi": {"bob", "team-lead"},
}

// scenarioTasks are each member's own task and the file it writes.
var scenarioTasks = map[string][2]string{"alice": {"1", "alpha.txt"}, "bob": {"2", "beta.txt"}}

// Policy is the scenario's scripted model.
func (s *TeamScenario) Policy(r *fakeapi.Request) fakeapi.Reply {
	calls := func(blocks ...fakeapi.Block) fakeapi.Reply { return fakeapi.Reply{Content: blocks} }
	first, turn := r.FirstUserText(), r.Turn()
	for _, who := range []string{"alice", "bob"} {
		if strings.Contains(first, who+"-task") {
			return s.member(r, who, turn)
		}
	}
	if !strings.Contains(first, "run the team") {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	s.Rec.Add("lead", r.LastUserText())
	switch turn {
	case 0:
		return calls(Use("TeamCreate", map[string]any{"team_name": s.Team, "description": "test team"}))
	case 1:
		return calls(
			Use("TaskCreate", map[string]any{"subject": "alpha", "description": "write alpha.txt"}),
			Use("TaskCreate", map[string]any{"subject": "beta", "description": "write beta.txt"}),
			Use("TaskCreate", map[string]any{"subject": "gamma", "description": "write gamma.txt; whoever claims it first"}))
	case 2:
		return calls(
			Use("Agent", map[string]any{"description": "alice", "team_name": s.Team, "name": "alice", "prompt": "alice-task: take task 1 and try task 3, greet bob"}),
			Use("Agent", map[string]any{"description": "bob", "team_name": s.Team, "name": "bob", "prompt": "bob-task: take task 2 and try task 3, wait for alice"}))
	}
	return fakeapi.TextReply("noted")
}

func (s *TeamScenario) member(r *fakeapi.Request, who string, turn int) fakeapi.Reply {
	calls := func(blocks ...fakeapi.Block) fakeapi.Reply { return fakeapi.Reply{Content: blocks} }
	s.Rec.Add(who, r.LastUserText())
	own, file := scenarioTasks[who][0], scenarioTasks[who][1]
	cwd := AgentCwd(r)
	if turn == 1 {
		s.mu.Lock()
		if s.claims == nil {
			s.claims = map[string][]string{}
		}
		// The results come in the order of turn 0's calls: own task, #3.
		for i, res := range ToolResults(r) {
			id := [2]string{own, "3"}[min(i, 1)]
			s.claims[id] = append(s.claims[id], who+": "+res)
		}
		s.mu.Unlock()
	}
	won := strings.Contains(s.Rec.All(who), "Updated task #3")
	switch turn {
	case 0:
		return calls(Use("TaskUpdate", map[string]any{"taskId": own, "status": "in_progress"}),
			Use("TaskUpdate", map[string]any{"taskId": "3", "status": "in_progress"}))
	case 1:
		b := []fakeapi.Block{Use("Write", map[string]any{"file_path": filepath.Join(cwd, file), "content": file + "\n"})}
		if won {
			b = append(b, Use("Write", map[string]any{"file_path": filepath.Join(cwd, "gamma.txt"), "content": who + "\n"}))
		}
		return calls(b...)
	case 2:
		b := []fakeapi.Block{Use("TaskUpdate", map[string]any{"taskId": own, "status": "completed"})}
		if won {
			b = append(b, Use("TaskUpdate", map[string]any{"taskId": "3", "status": "completed"}))
		}
		return calls(b...)
	}
	if who == "alice" {
		switch turn {
		case 3:
			return calls(Use("SendMessage", map[string]any{"to": "bob", "message": "hi bob, alice here", "summary": "greeting"}))
		case 4:
			return calls(Use("SendMessage", map[string]any{"to": "team-lead", "message": "alice: greeted bob", "summary": "report"}))
		}
		return fakeapi.TextReply("alice done")
	}
	if strings.Contains(s.Rec.All("bob"), "hi bob, alice here") && !strings.Contains(s.Rec.All("bob-replied"), "yes") {
		s.Rec.Add("bob-replied", "yes")
		return calls(Use("SendMessage", map[string]any{"to": "team-lead", "message": "bob: alice said hi", "summary": "report"}))
	}
	return fakeapi.TextReply("bob idle")
}

// Winner returns who won task #3 ("" before the claims are made).
func (s *TeamScenario) Winner() string {
	for _, who := range []string{"alice", "bob"} {
		if strings.Contains(s.Rec.All(who), "Updated task #3") {
			return who
		}
	}
	return ""
}

// CheckClaims fails t unless each task was claimed exactly once: #1 by
// alice, #2 by bob, and #3 by one of them while the other's claim was
// refused naming the winner.
func (s *TeamScenario) CheckClaims(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, want := range map[string]string{"1": "alice", "2": "bob"} {
		if c := s.claims[id]; len(c) != 1 || !strings.HasPrefix(c[0], want+": Updated task #"+id) {
			t.Errorf("claims of #%s: %q; want %s's alone, granted", id, c, want)
		}
	}
	var won, refused []string
	for _, c := range s.claims["3"] {
		who, res, _ := strings.Cut(c, ": ")
		switch {
		case strings.HasPrefix(res, "Updated task #3"):
			won = append(won, who)
		case strings.Contains(res, "already claimed by"):
			refused = append(refused, c)
		}
	}
	if len(won) != 1 || len(refused) != 1 || !strings.Contains(refused[0], "already claimed by "+won[0]) {
		t.Errorf("claims of #3: %q; want one granted and the other refused naming the winner", s.claims["3"])
	}
}

// CheckMessages fails t unless each of the scenario's chat messages was
// shown to its recipient's model exactly once.
func (s *TeamScenario) CheckMessages(t *testing.T) {
	t.Helper()
	for text, fromTo := range ScenarioMessages {
		to := fromTo[1]
		if to == "team-lead" {
			to = "lead"
		}
		if n := strings.Count(s.Rec.All(to), text); n != 1 {
			t.Errorf("%s's model was shown %q %d times, want once; it saw:\n%s", to, text, n, s.Rec.All(to))
		}
	}
}
