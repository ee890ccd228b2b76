package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestCoordinatorModeShrinksTheLead checks coordinator_mode: the lead's
// tools are only the orchestration ones and its prompt is the
// coordinator's.
func TestCoordinatorModeShrinksTheLead(t *testing.T) {
	t.Parallel()
	var tools []string
	var system string
	h := newHarness(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 && strings.Contains(r.FirstUserText(), "coordinate") {
			for _, tl := range r.Tools {
				tools = append(tools, tl.Name)
			}
			system = r.SystemText()
		}
		return fakeapi.TextReply("ok")
	})
	if out, errOut, code := h.run("-p", "coordinate the work", "--flag", "coordinator_mode=on"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	slices.Sort(tools)
	if got := strings.Join(tools, ","); got != "Agent,SendMessage,TaskOutput,TaskStop" {
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
				return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "verify",
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
	h := newHarness(t, policy)
	out, errOut, code := h.run("-p", "lead-start: verify", "--output-format", "json", "--flag", "verification_agent=on")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(launched, "running in the background") {
		t.Fatalf("the verification agent should have been launched in the background: %q", launched)
	}
	if r := h.result(out); r.Result != "verified" {
		t.Fatalf("result = %+v", r)
	}
	// Without the flag the type does not exist.
	h2 := newHarness(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "v",
				"subagent_type": "verification", "prompt": "p"})}}
		}
		if !strings.Contains(r.LastToolResultText(), "Unknown subagent_type") {
			return fakeapi.TextReply("unexpected: " + r.LastToolResultText())
		}
		return fakeapi.TextReply("refused")
	})
	out, _, _ = h2.run("-p", "try", "--output-format", "json")
	if r := h2.result(out); r.Result != "refused" {
		t.Fatalf("without the flag: %+v", r)
	}
}

// TestListingCommands covers `cohort agents` and `cohort flags`, including
// bad flag input.
func TestListingCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.write(".cohort/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep, NoSuchTool\n---\nYou review code.\n")
	h.write(".cohort/agents/broken.md", "---\nname: [unclosed\n---\nbody\n")
	out, errOut, code := h.run("agents")
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
	h.vars["COHORT_FLAG_FORK_SUBAGENT"] = "on"
	out, errOut, code = h.run("flags", "--flag", "agent_cwd=true")
	if code != 0 {
		t.Fatalf("flags: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"fork_subagent", "COHORT_FLAG_FORK_SUBAGENT", "agent_cwd", "--flag"} {
		if !strings.Contains(out, want) {
			t.Fatalf("cohort flags lacks %q:\n%s", want, out)
		}
	}
	_, errOut, code = h.run("flags", "--flag", "no_such_flag=on")
	if code != 2 || !strings.Contains(errOut, "no_such_flag") {
		t.Fatalf("unknown flag: exit %d, %s", code, errOut)
	}
	_, errOut, code = h.run("flags", "--flag", "fork_subagent=maybe")
	if code != 2 || !strings.Contains(errOut, "fork_subagent") {
		t.Fatalf("bad value: exit %d, %s", code, errOut)
	}
}
