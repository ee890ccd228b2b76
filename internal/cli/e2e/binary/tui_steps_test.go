package binary

import (
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/internal/tuiscreen"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var (
	statusCost, footerCost, listedCost = tuiscreen.StatusCost, tuiscreen.FooterCost, tuiscreen.ListedCost
	lastMatch                          = tuiscreen.LastMatch
)

// leadStep finds the step a lead request belongs to: the marker of the
// last user prompt holding "STEP" and how many assistant messages came
// after it ("" for an agent's request, which has no such prompt).
func leadStep(r *fakeapi.Request) (step string, n int) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "assistant" {
			n++
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" && strings.HasPrefix(b.Text, "STEP") {
				step, _, _ = strings.Cut(b.Text, " ")
				return step, n
			}
		}
	}
	return "", 0
}

// fiveSteps is the scripted model of TestFiveStepsInTmux.
type fiveSteps struct {
	release   chan struct{} // lets step 2's subagent answer
	typedSeen atomic.Bool   // the lead received the typed-ahead text
}

func (f *fiveSteps) agent(r *fakeapi.Request) fakeapi.Reply {
	switch first := r.FirstUserText(); {
	case strings.Contains(first, "SUB-SLOW"):
		select {
		case <-f.release:
			return fakeapi.TextReply("explained the matcher")
		case <-r.Context().Done():
			return fakeapi.FaultReply(fakeapi.ServerError)
		}
	case strings.Contains(first, "SUB-HANG"):
		<-r.Context().Done()
		return fakeapi.FaultReply(fakeapi.ServerError)
	case strings.Contains(first, "WT-") && r.Turn() == 0:
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
			"file_path": clitest.AgentCwd(r) + "/refactor.go", "content": "package match\n"})}}
	}
	return fakeapi.TextReply("reviewed: " + strings.Repeat("fine ", 40))
}

func (f *fiveSteps) policy(r *fakeapi.Request) fakeapi.Reply {
	step, n := leadStep(r)
	if strings.Contains(r.LastUserText(), "also check IsPattern") {
		f.typedSeen.Store(true)
	}
	agent := func(desc, prompt string, extra map[string]any) fakeapi.Block {
		in := map[string]any{"description": desc, "prompt": prompt, "subagent_type": "general-purpose"}
		for k, v := range extra {
			in[k] = v
		}
		return clitest.Use("Agent", in)
	}
	calls := func(b ...fakeapi.Block) fakeapi.Reply { return fakeapi.Reply{Content: b} }
	switch {
	case step == "":
		return f.agent(r)
	case n > 0:
		return fakeapi.TextReply(step + " finished.")
	case step == "STEP1":
		return calls(clitest.Use("Bash", map[string]any{"command": "echo BenchmarkMatch 100 ns/op", "description": "benchmark"}),
			agent("review matcher", "SUB- review match.go", nil), agent("review tests", "SUB- review match_test.go", nil))
	case step == "STEP2":
		return calls(agent("explain matcher", "SUB-SLOW explain match.go", nil))
	case step == "STEP3":
		return calls(clitest.Use("Bash", map[string]any{"command": "echo ok-tests", "description": "run tests", "run_in_background": true}))
	case step == "STEP4":
		return calls(agent("refactor apart", "WT- refactor match.go", map[string]any{"isolation": "worktree"}))
	case step == "STEP5":
		return calls(agent("slow search", "SUB-HANG search everything", nil))
	}
	return fakeapi.TextReply(step + " finished.")
}

// TestFiveStepsInTmux runs a new user's session in the real binary's
// terminal UI: a benchmark plus a parallel review, typing ahead while a
// subagent works, a background test run, a refactor in an isolated
// worktree, and Esc in the middle of a turn. After each step the status
// bar, /cost and the turn's footer agree to the cent, and /tasks lists
// every task the session has had.
func TestFiveStepsInTmux(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	f := &fiveSteps{release: make(chan struct{})}
	h := clitest.New(t, f.policy)
	clitest.GitRepo(t, h, map[string]string{"match.go": "package match\n", "match_test.go": "package match\n"})
	env := append(h.Environ(), "TERM=xterm-256color")
	p := startPane(t, h.Dir, env, bin, "--cwd", h.Dir, "--allowedTools", "Bash", "Write")
	p.tmux("resize-window", "-t", "0", "-x", "200", "-y", "60")
	p.waitText("default mode")
	prompt := func(s string) {
		p.keys(true, s)
		p.keys(false, "Enter")
	}
	finished := func(step string) {
		p.waitFor(step+"'s footer", func(s string) bool {
			return strings.Contains(s, step+" finished.") && strings.Contains(s, "this session")
		})
	}
	var tasks []string
	check := func(step string, newTasks ...string) {
		t.Helper()
		tasks = append(tasks, newTasks...)
		prompt("/cost")
		p.waitFor("/cost's total", func(s string) bool { return listedCost.MatchString(s[strings.LastIndex(s, "Cost:")+1:]) })
		// The status bar follows the session at its next look.
		scr := p.waitFor("the status bar at /cost's total", func(s string) bool {
			return lastMatch(statusCost, s) != "" && lastMatch(statusCost, s) == lastMatch(listedCost, s)
		})
		if foot := lastMatch(footerCost, scr); foot != "" && foot != lastMatch(listedCost, scr) {
			t.Errorf("after %s the last footer says %s, /cost and the status bar %s:\n%s", step, foot, lastMatch(listedCost, scr), scr)
		}
		prompt("/tasks")
		scr = p.waitText("Tasks:")
		listed := strings.Join(strings.Fields(scr[strings.LastIndex(scr, "Tasks:"):]), " ")
		for _, want := range tasks {
			if !strings.Contains(listed, want) {
				t.Errorf("after %s /tasks does not list %q:\n%s", step, want, scr)
			}
		}
	}

	prompt("STEP1 benchmark the matcher and review it in parallel")
	finished("STEP1")
	check("STEP1", "review matcher", "review tests")

	prompt("STEP2 explain the matcher")
	p.waitText("explain matcher", "esc to interrupt")
	p.keys(true, "also check IsPattern")
	p.keys(false, "Enter")
	p.waitText("queued: also check IsPattern")
	close(f.release)
	finished("STEP2")
	if scr := p.tmux("capture-pane", "-p", "-t", "0"); strings.Contains(scr, "queued: also check IsPattern") {
		t.Errorf("the queued line stays after the turn that read it:\n%s", scr)
	}
	if !f.typedSeen.Load() {
		t.Error("the lead never received the text typed during the turn")
	}
	check("STEP2", "explain matcher")

	prompt("STEP3 run the tests in the background")
	finished("STEP3")
	p.waitFor("the background run's notice to be answered", func(s string) bool { return strings.Count(s, "STEP3 finished.") >= 2 })
	check("STEP3", "run tests")

	prompt("STEP4 refactor in a worktree of its own")
	finished("STEP4")
	status, err := exec.Command("git", "-C", h.Dir, "status", "--porcelain").CombinedOutput()
	if err != nil || strings.TrimSpace(string(status)) != "" {
		t.Errorf("the isolated refactor left the checkout unclean (%v):\n%s", err, status)
	}
	check("STEP4", "refactor apart")

	prompt("STEP5 search everything")
	p.waitText("slow search", "esc to interrupt")
	p.keys(false, "Escape")
	p.waitFor("the interrupt's one line", func(s string) bool {
		return strings.Contains(s, "interrupted by you") && !strings.Contains(s, "esc to interrupt")
	})
	prompt("STEP6 wrap up")
	finished("STEP6")
	check("STEP5", "slow search")
}
