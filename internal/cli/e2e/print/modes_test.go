package print

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestCoordinatorModeShrinksTheLead checks coordinator_mode: the lead's
// tools are only the orchestration ones and its prompt is the
// coordinator's.
func TestCoordinatorModeShrinksTheLead(t *testing.T) {
	t.Parallel()
	var tools []string
	var system string
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 && strings.Contains(r.FirstUserText(), "coordinate") {
			for _, tl := range r.Tools {
				tools = append(tools, tl.Name)
			}
			system = r.SystemText()
		}
		return fakeapi.TextReply("ok")
	})
	if out, errOut, code := h.Run("-p", "coordinate the work", "--flag", "coordinator_mode=on"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	slices.Sort(tools)
	// ListAgents goes wherever SendMessage goes (issue 38): a coordinator
	// sees whom it can message.
	if got := strings.Join(tools, ","); got != "Agent,ListAgents,SendMessage,TaskOutput,TaskStop" {
		t.Fatalf("coordinator tools = %s", got)
	}
	if !strings.Contains(system, "You are the coordinator") {
		t.Fatalf("the coordinator prompt is not in the system prompt:\n%s", system)
	}
}

// TestVerificationAgentRunsInTheBackground: with verification_agent on, the
// built-in verification agent is available and always runs in the
// background, ending with a verdict line.
func TestVerificationAgentRunsInTheBackground(t *testing.T) {
	t.Parallel()
	var launched string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "verify-job"):
			return fakeapi.TextReply("Checked the build.\nVERDICT: PASS")
		case strings.Contains(first, "lead-start"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "verify",
					"subagent_type": "verification", "prompt": "verify-job: check the change"})}}
			case 1:
				launched = r.LastToolResultText()
				return fakeapi.TextReply("waiting")
			}
			if strings.Contains(r.LastUserText(), "VERDICT: PASS") {
				return fakeapi.TextReply("verified")
			}
			return fakeapi.TextReply("waiting")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	out, errOut, code := h.Run("-p", "lead-start: verify", "--output-format", "json", "--flag", "verification_agent=on")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(launched, "running in the background") {
		t.Fatalf("the verification agent should have been launched in the background: %q", launched)
	}
	if r := h.Result(out); r.Result != "verified" {
		t.Fatalf("result = %+v", r)
	}
	// Without the flag the type does not exist.
	h2 := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "v",
				"subagent_type": "verification", "prompt": "p"})}}
		}
		if !strings.Contains(r.LastToolResultText(), "Unknown subagent_type") {
			return fakeapi.TextReply("unexpected: " + r.LastToolResultText())
		}
		return fakeapi.TextReply("refused")
	})
	out, _, _ = h2.Run("-p", "try", "--output-format", "json")
	if r := h2.Result(out); r.Result != "refused" {
		t.Fatalf("without the flag: %+v", r)
	}
}

// TestListingCommands covers `cohort agents --definitions` and `cohort flags`, including
// bad flag input.
func TestListingCommands(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, nil)
	h.Write(".cohort/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep, NoSuchTool\n---\nYou review code.\n")
	h.Write(".cohort/agents/broken.md", "---\nname: [unclosed\n---\nbody\n")
	out, errOut, code := h.Run("agents", "--definitions")
	if code != 0 {
		t.Fatalf("agents: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"reviewer", "general-purpose", "Explore", ".cohort/agents/reviewer.md"} {
		if !strings.Contains(out, want) {
			t.Fatalf("cohort agents lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "broken.md") || !strings.Contains(errOut, "NoSuchTool") {
		t.Fatalf("problems should name the broken file and the unknown tool:\n%s", errOut)
	}
	h.Vars["COHORT_FLAG_FORK_SUBAGENT"] = "on"
	out, errOut, code = h.Run("flags", "--flag", "agent_cwd=true")
	if code != 0 {
		t.Fatalf("flags: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"fork_subagent", "COHORT_FLAG_FORK_SUBAGENT", "agent_cwd", "--flag"} {
		if !strings.Contains(out, want) {
			t.Fatalf("cohort flags lacks %q:\n%s", want, out)
		}
	}
	_, errOut, code = h.Run("flags", "--flag", "no_such_flag=on")
	if code != 2 || !strings.Contains(errOut, "no_such_flag") {
		t.Fatalf("unknown flag: exit %d, %s", code, errOut)
	}
	_, errOut, code = h.Run("flags", "--flag", "fork_subagent=maybe")
	if code != 2 || !strings.Contains(errOut, "fork_subagent") {
		t.Fatalf("bad value: exit %d, %s", code, errOut)
	}
}

// TestAgentListAttachmentMovesTheList: with agent_list_attachment on, the
// agent types are listed in a system reminder of the first user message,
// not in the Agent tool's description; plan mode tools exist without teams.
func TestAgentListAttachmentMovesTheList(t *testing.T) {
	t.Parallel()
	var agentDesc, first string
	var tools []string
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		for _, tl := range r.Tools {
			tools = append(tools, tl.Name)
			if tl.Name == "Agent" {
				agentDesc = tl.Description
			}
		}
		first = r.FirstUserText()
		return fakeapi.TextReply("ok")
	})
	if out, errOut, code := h.Run("-p", "hello", "--flag", "agent_list_attachment=on", "--flag", "agent_teams=off"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(agentDesc, "general-purpose:") || !strings.Contains(first, "- general-purpose:") {
		t.Fatalf("the agent list should be in the first user message, not the tool description\ndescription: %s\nfirst: %s", agentDesc, first)
	}
	if !slices.Contains(tools, "EnterPlanMode") || slices.Contains(tools, "SendMessage") {
		t.Fatalf("without teams: plan tools stay, team tools go; got %v", tools)
	}
}

// TestSubagentLimits: --agent-max-turns stops a looping subagent, and
// --max-agent-depth 1 removes the Agent tool from subagents (and refuses
// a spawn at the limit).
func TestSubagentLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var childTools []string
	var leadSaw string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "loop-job"):
			mu.Lock()
			childTools = childTools[:0]
			for _, tl := range r.Tools {
				childTools = append(childTools, tl.Name)
			}
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Glob", map[string]any{"pattern": "*"})}}
		case strings.Contains(first, "lead-start"):
			if turn == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "loop", "prompt": "loop-job: keep globbing"})}}
			}
			mu.Lock()
			leadSaw = r.LastToolResultText()
			mu.Unlock()
			return fakeapi.TextReply("done")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	if out, errOut, code := h.Run("-p", "lead-start: limits", "--agent-max-turns", "3", "--max-agent-depth", "1"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(leadSaw, "turn limit") {
		t.Fatalf("the subagent should stop at its turn limit: %q", leadSaw)
	}
	if slices.Contains(childTools, "Agent") {
		t.Fatalf("at the depth limit the subagent must not have the Agent tool: %v", childTools)
	}
	if n := countRequests(h, "loop-job"); n != 3 {
		t.Fatalf("the subagent made %d requests, want 3", n)
	}
}

func countRequests(h *clitest.Harness, marker string) int {
	n := 0
	for _, rec := range h.Srv.Requests() {
		if rec.Request != nil && strings.Contains(rec.Request.FirstUserText(), marker) {
			n++
		}
	}
	return n
}
