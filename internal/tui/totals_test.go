package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/tuiscreen"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var (
	statusCost, footerCost, listedCost = tuiscreen.StatusCost, tuiscreen.FooterCost, tuiscreen.ListedCost
	lastMatch                          = tuiscreen.LastMatch
)

// agentsCost is what Session.Agents says the session cost (a workflow
// run's node is not an agent: its agents are counted).
func agentsCost(s *cohort.Session) float64 {
	sum := 0.0
	for _, a := range s.Agents() {
		if a.Workflow == nil {
			sum += a.CostUSD
		}
	}
	return sum
}

// awaitAgents waits until the session's agents satisfy cond.
func awaitAgents(t *testing.T, s *cohort.Session, what string, cond func([]cohort.AgentInfo) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond(s.Agents()) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("the session's agents never showed %s: %+v", what, s.Agents())
		}
	}
}

// TestTotalsKeepAnEvictedAgent: a background agent finishes and leaves
// memory (EvictAfter); its spend stays in every total: the status bar,
// /cost, the turn's footer (the result's total_cost_usd) and the sum of
// Session.Agents agree to the cent.
func TestTotalsKeepAnEvictedAgent(t *testing.T) {
	w := newWorld(t, worldConfig{configure: func(c *cohort.Config) { c.EvictAfter = time.Millisecond }},
		func(r *fakeapi.Request) fakeapi.Reply {
			switch first := r.FirstUserText(); {
			case strings.Contains(first, "BG-COUNT"):
				return fakeapi.TextReply("counted the pears: " + strings.Repeat("pear ", 200))
			case r.Turn() == 0:
				return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "count pears",
					"prompt": "BG-COUNT count the pears", "subagent_type": "general-purpose", "run_in_background": true})}}
			}
			return fakeapi.TextReply("noted")
		})
	w.waitFor("default mode")
	w.typeText("count in the background")
	w.key("enter")
	w.waitFor("this session")
	awaitAgents(t, w.sess, "the background agent evicted", func(as []cohort.AgentInfo) bool {
		for _, a := range as {
			if a.Kind == "background" {
				return false
			}
		}
		return true
	})
	w.typeText("and now?")
	w.key("enter")
	w.waitUntil("a second footer", func(s string) bool { return strings.Count(s, "this session") == 2 })
	w.typeText("/cost")
	w.key("enter")
	// The status bar follows the session at its next look (a frame or so).
	scr := w.waitUntil("the status bar at the footer's total", func(s string) bool {
		return strings.Contains(s, "Cost:") && lastMatch(statusCost, s) == lastMatch(footerCost, s)
	})
	want := cost(agentsCost(w.sess))
	for what, got := range map[string]string{"status bar": lastMatch(statusCost, scr),
		"footer": lastMatch(footerCost, scr), "/cost": lastMatch(listedCost, scr)} {
		if got != want {
			t.Errorf("the %s says %q, Session.Agents adds up to %s:\n%s", what, got, want, scr)
		}
	}
}

// TestTreeCountsTheLeadsTools: the lead's tools column counts its calls,
// as a subagent's does, and Session.Agents says the same.
func TestTreeCountsTheLeadsTools(t *testing.T) {
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*"}), use("Glob", map[string]any{"pattern": "*.go"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*.md"})}}
		}
		return fakeapi.TextReply("looked")
	})
	w.waitFor("default mode")
	w.typeText("look around")
	w.key("enter")
	w.waitFor("this session")
	w.key("ctrl+t")
	scr := w.waitFor("lead idle")
	var row string
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "● lead") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) < 3 || f[len(f)-2] != "3" {
		t.Errorf("the lead's row does not count 3 tool calls: %q\n%s", row, scr)
	}
	if a := w.sess.Agents()[0]; a.Kind != "lead" || a.ToolUses != 3 {
		t.Errorf("Session.Agents()[0] is %s with %d tool uses, want the lead with 3", a.Kind, a.ToolUses)
	}
}

// TestTasksListsEveryTask: /tasks and the tree list a background agent
// after it has finished and left memory, and /tasks a background Bash
// command too.
func TestTasksListsEveryTask(t *testing.T) {
	w := newWorld(t, worldConfig{configure: func(c *cohort.Config) {
		c.EvictAfter, c.AllowedTools = time.Millisecond, []string{"Bash"}
	}}, func(r *fakeapi.Request) fakeapi.Reply {
		switch first := r.FirstUserText(); {
		case strings.Contains(first, "BG-COUNT"):
			return fakeapi.TextReply("counted the pears")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{
				use("Agent", map[string]any{"description": "count pears", "prompt": "BG-COUNT count the pears",
					"subagent_type": "general-purpose", "run_in_background": true}),
				use("Bash", map[string]any{"command": "echo plums", "description": "say plums", "run_in_background": true})}}
		}
		return fakeapi.TextReply("noted")
	})
	w.waitFor("default mode")
	w.typeText("count in the background")
	w.key("enter")
	w.waitFor("this session")
	awaitAgents(t, w.sess, "the background agent evicted", func(as []cohort.AgentInfo) bool {
		for _, a := range as {
			if a.Kind == "background" {
				return false
			}
		}
		return true
	})
	w.typeText("/tasks")
	w.key("enter")
	scr := w.waitFor("Tasks:")
	tasks := scr[strings.LastIndex(scr, "Tasks:"):]
	for _, want := range []string{"background completed count pears", "local_bash completed say plums"} {
		if !strings.Contains(strings.Join(strings.Fields(tasks), " "), want) {
			t.Errorf("/tasks does not list %q:\n%s", want, scr)
		}
	}
	w.key("ctrl+t")
	w.waitFor("count pears", "✓ done", "lead idle · 1 agents · 0 running · 1 done")
}
