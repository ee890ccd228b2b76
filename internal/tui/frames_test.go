package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"testing"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestTreeThroughAFanOut: the lead starts three subagents at once; the
// tree shows the three running (the fake holds their replies), then all
// three done, with their tokens and costs and the session's total.
func TestTreeThroughAFanOut(t *testing.T) {
	g := newGate(3)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "SUB-"):
			if !g.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("counted " + first[strings.Index(first, "SUB-"):][:5])
		case r.Turn() == 0:
			// Three types: siblings of one type start behind the first one's
			// first token (for its cache), and this fake holds every reply.
			var blocks []fakeapi.Block
			for i, f := range []string{"apples", "pears", "plums"} {
				blocks = append(blocks, use("Agent", map[string]any{"description": "count " + f,
					"prompt":        "SUB-" + strings.ToUpper(f[:1]) + " count the " + f,
					"subagent_type": []string{"general-purpose", "Explore", "Plan"}[i]}))
			}
			return fakeapi.Reply{Content: blocks}
		}
		return fakeapi.TextReply("All three counted.")
	})
	w.waitFor("default mode")
	w.typeText("count the fruit")
	w.key("enter")
	g.await(t)
	w.key("ctrl+t")
	running := w.waitFor("3 running", "count apples", "count pears", "count plums")
	w.golden("fanout-running", running)
	w.keepColours("fanout-running")
	close(g.open)
	done := w.waitUntil("three agents done", func(s string) bool {
		// The tree's "lead idle" can come before the turn's last message
		// is drawn (the tree reads the session; the chat reads events).
		return strings.Count(s, "✓ done") == 3 && strings.Contains(s, "lead idle · 3 agents · 0 running") &&
			strings.Contains(s, "done in 2 turns")
	})
	w.golden("fanout-done", done)
	// The costs on screen are the session's own.
	for _, a := range w.sess.Agents() {
		if a.Kind == "lead" {
			continue
		}
		if a.CostUSD <= 0 || !strings.Contains(done, cost(a.CostUSD)) {
			t.Errorf("agent %s costs %s, not on screen:\n%s", a.Description, cost(a.CostUSD), done)
		}
	}
	// The selected agent's transcript is under the tree.
	w.key("down")
	w.waitFor("▸   ● count apples", "● counted SUB-A")
	w.key("ctrl+t")
	w.waitFor("All three counted.")
}

// TestTeammatePermissionDialog: a teammate's Bash call asks the lead; the
// dialog names the teammate on its colour; "always allow" lets the call
// run and writes the rule to .cohort/settings.local.json.
func TestTeammatePermissionDialog(t *testing.T) {
	// The lead's answer after the spawn waits until the prompt is answered,
	// so the frame with the dialog is the same every run.
	after := newGate(1)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "MATE-BUILD") && r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "touch built.txt", "description": "build it"})}}
		case strings.Contains(first, "MATE-BUILD"):
			return fakeapi.TextReply("built")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "crew"})}}
		case r.Turn() == 1:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "builder", "prompt": "MATE-BUILD build it",
				"name": "alice", "team_name": "crew"})}}
		case r.Turn() == 2:
			if !after.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
		}
		return fakeapi.TextReply("Alice is on it.")
	})
	w.waitFor("default mode")
	w.typeText("make a team")
	w.key("enter")
	scr := w.waitFor("Permission", "@alice", "touch built.txt", "always allow Bash(touch:*)", "joined team crew")
	w.golden("permission-teammate", scr)
	// The badge is drawn on alice's team colour.
	w.term.mu.Lock()
	row, col := findCell(w.term.emu.String(), "@alice")
	cell := w.term.emu.CellAt(col, row)
	w.term.mu.Unlock()
	if cell == nil || cell.Style.Bg == nil {
		t.Errorf("the badge @alice has no background colour (cell %+v)", cell)
	}
	w.key("2")
	w.waitUntil("the dialog closed", func(s string) bool { return !strings.Contains(s, "Permission") })
	close(after.open)
	w.key("ctrl+t")
	w.waitUntil("alice idle", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "alice") && strings.Contains(l, "idle") {
				return true
			}
		}
		return false
	})
	waitFile(t, w.dir+"/built.txt")
	data := readFile(t, w.dir+"/.cohort/settings.local.json")
	if !strings.Contains(data, `"Bash(touch:*)"`) {
		t.Errorf("settings.local.json does not hold the rule:\n%s", data)
	}
}

// TestEscInterrupts: Esc stops the lead's turn while the model is still
// answering; the UI says so and takes a new prompt.
func TestEscInterrupts(t *testing.T) {
	g := newGate(1)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "think long") && r.Turn() == 0 {
			if !g.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
		}
		return fakeapi.TextReply("Short answer.")
	})
	w.waitFor("default mode")
	w.typeText("think long")
	w.key("enter")
	g.await(t)
	w.waitFor("working · esc to interrupt")
	w.key("esc")
	scr := w.waitUntil("the turn ended", func(s string) bool {
		return strings.Contains(s, "interrupted") && !strings.Contains(s, "esc to interrupt")
	})
	w.golden("esc-interrupt", scr)
	close(g.open)
	w.typeText("again")
	w.key("enter")
	w.waitFor("Short answer.")
}

// TestTypeAheadQueue: what is typed during a turn shows as queued, then
// moves into the conversation once the lead has read it.
func TestTypeAheadQueue(t *testing.T) {
	g := newGate(1)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		last := r.LastUserText()
		switch {
		case r.Turn() == 0:
			// Held until the test has typed ahead.
			if !g.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*.go"})}}
		case strings.Contains(last, "ALSO-CHECK"):
			return fakeapi.TextReply("Checked the tests too.")
		}
		return fakeapi.TextReply("The lead answered without reading the typed-ahead message.")
	})
	w.waitFor("default mode")
	w.typeText("look at the code")
	w.key("enter")
	g.await(t)
	w.typeText("ALSO-CHECK the tests")
	w.key("enter")
	w.golden("typeahead-queued", w.waitFor("queued: ALSO-CHECK the tests"))
	close(g.open)
	read := w.waitUntil("the message read", func(s string) bool {
		return strings.Contains(s, "> ALSO-CHECK the tests") && strings.Contains(s, "Checked the tests too.") && !strings.Contains(s, "queued:") &&
			strings.Contains(s, "done in 2 turns")
	})
	w.golden("typeahead-read", read)
}

// TestShiftTabCyclesModes: default → acceptEdits → plan → default, never
// bypassPermissions; a session started in bypassPermissions cycles
// through it.
func TestShiftTabCyclesModes(t *testing.T) {
	w := newWorld(t, worldConfig{width: 60, height: 8}, func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") })
	w.waitFor("default mode")
	var frames []string
	for _, want := range []string{"acceptEdits", "plan", "default", "acceptEdits"} {
		w.key("shift+tab")
		frames = append(frames, w.waitFor(modeText(want)))
		if got := w.sess.PermissionMode(); got != want {
			t.Fatalf("after Shift+Tab the session is in %s, want %s", got, want)
		}
	}
	w.golden("modes", strings.Join(frames, "\n-----\n"))

	b := newWorld(t, worldConfig{width: 60, height: 8, mode: "bypassPermissions"}, func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") })
	b.waitFor("bypass permissions on")
	for _, want := range []string{"default", "acceptEdits", "plan", "bypassPermissions"} {
		b.key("shift+tab")
		b.waitFor(modeText(want))
		if got := b.sess.PermissionMode(); got != want {
			t.Errorf("the bypassPermissions session is in %s, want %s", got, want)
		}
	}
}

// TestResumePicker: /resume lists the project's earlier sessions; picking
// one continues it.
func TestResumePicker(t *testing.T) {
	policy := func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("noted: " + r.LastUserText()) }
	w := newWorld(t, worldConfig{}, policy)
	// Two earlier sessions of the project, made the way any client makes them.
	for _, p := range []string{"first earlier session", "second earlier session"} {
		s, err := cohort.New(t.Context(), w.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range s.Run(t.Context(), p) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	w.waitFor("default mode")
	w.typeText("/resume")
	w.key("enter")
	scr := w.waitFor("Resume a session", "first earlier session", "second earlier session")
	w.golden("resume-picker", maskIDs(scr))
	w.key("down", "enter")
	w.waitFor("resumed session")
	if got := w.model.sess.ID(); got == w.sess.ID() {
		t.Fatalf("the UI still runs session %s", got)
	}
	w.typeText("what was it")
	w.key("enter")
	w.waitFor("noted: what was it")
}

// maskIDs hides the picker's session ids and dates.
func maskIDs(s string) string { return idRe.ReplaceAllString(s, "ID-DATE") }

func findCell(scr, s string) (row, col int) {
	for i, l := range strings.Split(scr, "\n") {
		if j := strings.Index(l, s); j >= 0 {
			return i, len([]rune(l[:j]))
		}
	}
	return -1, -1
}

// TestAskUserQuestion: the lead's question shows its options; a number
// answers it, and the answer reaches the model. The terminal is not in
// focus, so the question also sends a desktop notification (OSC 9).
func TestAskUserQuestion(t *testing.T) {
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("AskUserQuestion", map[string]any{"questions": []map[string]any{{
				"question": "Which database should the cache use?", "header": "Cache", "multiSelect": false,
				"options": []map[string]any{{"label": "Redis", "description": "fast, one more service"},
					{"label": "SQLite", "description": "a file, no server"}}}}})}}
		}
		return fakeapi.TextReply("Going with: " + r.LastToolResultText())
	})
	w.waitFor("default mode")
	w.prog.Send(tea.BlurMsg{})
	w.typeText("set up the cache")
	w.key("enter")
	scr := w.waitFor("◆ AskUserQuestion", "Question 1/1", "Which database should the cache use?", "1 Redis", "2 SQLite")
	w.golden("ask-question", scr)
	if raw := w.term.raw(); !strings.Contains(raw, "\x1b]9;Cohort has a question for you") {
		t.Errorf("no OSC 9 notification while unfocused; the terminal got %q", raw)
	}
	w.key("2")
	w.waitFor("Going with:", "SQLite")
}

// TestTeammatePlanApproval: a teammate that must have its plan approved
// shows it to the user, with its badge; 2 approves with feedback, which
// reaches the teammate with the verdict.
func TestTeammatePlanApproval(t *testing.T) {
	after := newGate(1)
	verdict := make(chan string, 1)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "PLAN-JOB") && r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("ExitPlanMode", map[string]any{"plan": "1. Read the notes.\n2. Change nothing."})}}
		case strings.Contains(first, "PLAN-JOB"):
			select {
			case verdict <- r.LastToolResultText():
			default:
			}
			return fakeapi.TextReply("bob: going ahead")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "crew"})}}
		case r.Turn() == 1:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "planner", "prompt": "PLAN-JOB plan first",
				"name": "bob", "team_name": "crew", "mode": "plan"})}}
		case r.Turn() == 2:
			if !after.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
		}
		return fakeapi.TextReply("Bob is planning.")
	})
	w.waitFor("default mode")
	w.typeText("plan with bob")
	w.key("enter")
	scr := w.waitFor("Plan", "@bob", "1. Read the notes.", "2. Change nothing.", "Approve with feedback", "joined team crew")
	w.golden("plan-approval", scr)
	w.key("2")
	w.typeText("keep it short")
	w.key("enter")
	w.waitUntil("the dialog closed", func(s string) bool { return !strings.Contains(s, "Approve with feedback") })
	close(after.open)
	select {
	case got := <-verdict:
		if !strings.Contains(got, "approved") || !strings.Contains(got, "keep it short") {
			t.Errorf("the teammate read %q; want the approval and the feedback", got)
		}
	case <-time.After(deadline):
		t.Fatal("the teammate never heard back")
	}
}

// TestResize: the frame follows the terminal's size, down and up, with
// nothing left over from the larger one.
func TestResize(t *testing.T) {
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("a fairly long answer that will have to wrap on a narrow terminal")
	})
	w.waitFor("default mode")
	w.typeText("say something")
	w.key("enter")
	w.waitFor("fairly long answer")
	for _, size := range [][2]int{{40, 10}, {20, 5}, {100, 30}} {
		w.term.resize(size[0], size[1])
		w.prog.Send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		scr := w.waitUntil("a frame that fits", func(s string) bool {
			// The status line is on the terminal's last row.
			lines := strings.Split(s, "\n")
			return len(lines) == size[1] && strings.HasPrefix(lines[size[1]-1], "default")
		})
		for i, l := range strings.Split(scr, "\n") {
			if n := len([]rune(l)); n > size[0] {
				t.Errorf("%dx%d: line %d is %d wide: %q", size[0], size[1], i, n, l)
			}
		}
	}
}
