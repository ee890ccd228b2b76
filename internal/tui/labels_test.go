package tui

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestBackgroundedAgentLabels (issue 43, item 4): after Ctrl+B the
// subagent is "background" in the tree at once, and its permission prompt
// names it by its description as a background agent; the lead, whose turn
// has ended while the Run waits for that agent, is idle, its time stopped.
func TestBackgroundedAgentLabels(t *testing.T) {
	g := newGate(1)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		switch first := r.FirstUserText(); {
		case strings.Contains(first, "SUB-P") && r.Turn() == 0:
			if !g.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "touch pears.txt"})}}
		case strings.Contains(first, "SUB-P"):
			return fakeapi.TextReply("counted the pears")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "count pears",
				"prompt": "SUB-P count the pears", "subagent_type": "general-purpose"})}}
		case r.Turn() == 1:
			return fakeapi.TextReply("It counts in the background now.")
		}
		return fakeapi.TextReply("All counted.")
	})
	w.waitFor("default mode")
	w.typeText("count the pears")
	w.key("enter")
	g.await(t)
	w.waitFor("◆ Agent(count pears)") // the note of the move comes after it
	w.key("ctrl+b")
	w.waitFor("moved 1 subagent to the background", "It counts in the background now.")
	w.key("ctrl+t")
	tree := w.waitUntil("the lead idle and the agent in the background", func(s string) bool {
		return strings.Contains(s, "lead idle · 1 agents · 1 running") && rowHas(s, "count pears", "background", "running") &&
			rowHas(s, "lead", "idle")
	})
	w.golden("background-tree", tree)
	if rowHas(tree, "count pears", "subagent") {
		t.Errorf("the backgrounded agent is still a subagent:\n%s", tree)
	}
	w.key("esc")
	close(g.open)
	prompt := w.waitFor("Permission", "@count pears", "background asks", "touch pears.txt")
	w.golden("background-prompt", prompt)
	w.key("1")
	w.waitFor("All counted.")
}

// rowHas reports whether a line of the screen holds all of words.
func rowHas(scr string, words ...string) bool {
	for _, l := range strings.Split(scr, "\n") {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestCallAndResultLines: a call's line names what it acts on — a
// search's pattern, a task and its change, a team — never "TaskUpdate()";
// a collapsed result too long for the line shows its first sentence, not
// the model's instructions cut at the edge. (Seen playing the model
// through the relay: `Grep(/repo/match_test.go)`, `TaskUpdate()`,
// `TeamDelete()`, and "…do not wait or poll for it, continue with…".)
func TestCallAndResultLines(t *testing.T) {
	for _, c := range []struct{ tool, input, want string }{
		{"Grep", `{"pattern":"^func Test","path":"/repo/match_test.go"}`, "Grep(^func Test)"},
		{"Glob", `{"pattern":"**/*.go","path":"/repo"}`, "Glob(**/*.go)"},
		{"TaskCreate", `{"subject":"Write the test","description":"In gjson_test.go, add…"}`, "TaskCreate(Write the test)"},
		{"TaskUpdate", `{"taskId":"2","status":"completed"}`, "TaskUpdate(#2 status completed)"},
		{"TaskUpdate", `{"taskId":"1","owner":"writer"}`, "TaskUpdate(#1 owner writer)"},
		{"TeamDelete", `{"team_name":"reverse-test"}`, "TeamDelete(reverse-test)"},
		{"Agent", `{"description":"Review it","prompt":"…","team_name":"crew","name":"bob"}`, "Agent(Review it)"},
	} {
		if got := toolSummary(c.tool, []byte(c.input)); got != c.want {
			t.Errorf("toolSummary(%s, %s) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
	long := "The agent is running in the background (agentId: a1). You will get a <task-notification> when it finishes; do not wait or poll for it."
	if got := firstSentence(long, 80); got != "The agent is running in the background (agentId: a1). …" {
		t.Errorf("firstSentence cut a long result to %q", got)
	}
	if got := firstSentence("Fixed it. All tests pass.", 80); got != "Fixed it. All tests pass." {
		t.Errorf("firstSentence shortened a result that fits: %q", got)
	}
}

// TestProtocolMessagesInWords: a shutdown request the lead sends shows as
// what it asks, not as JSON with a request id (seen through the relay:
// `team-lead → writer: {"type":"shutdown_request","request_id":"01a2…"}`).
func TestProtocolMessagesInWords(t *testing.T) {
	for in, want := range map[string]string{
		`{"type":"shutdown_request","request_id":"01a24beb","reason":"The review is done."}`:         "asks to shut down: The review is done.",
		`{"type":"shutdown_response","request_id":"01a2","approve":true}`:                            "approved the shutdown request",
		`{"type":"shutdown_response","request_id":"01a2","approve":false,"reason":"busy"}`:           "declined the shutdown request: busy",
		`{"type":"plan_approval_response","request_id":"p1","approve":false,"feedback":"add tests"}`: "rejected the plan: add tests",
		"The test is ready.\nSee line 12.":                                                           "The test is ready. …",
		`{"note":"plain JSON someone sent"}`:                                                         `{"note":"plain JSON someone sent"}`,
	} {
		if got := teamText(in); got != want {
			t.Errorf("teamText(%s) = %q, want %q", in, got, want)
		}
	}
}
