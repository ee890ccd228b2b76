package tui

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/cohort-dev/cohort"
)

// offline is a model on the crowd with no program around it: the test
// presses keys with Update and runs the commands it gets back.
func offline(t *testing.T, dir string) (*Model, *crowd) {
	t.Helper()
	c := newCrowd(2, time.Now())
	m := newModel(Options{Session: c, Dir: dir})
	m.width, m.high = 100, 30
	m.feed.send = func(tea.Msg) {}
	t.Cleanup(m.shutdown)
	m.Init()
	return m, c
}

// enter types line and presses Enter; it returns what the command the
// model asked for produced, for commands that run in the background.
func enter(m *Model, line string) tea.Msg {
	for _, r := range line {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		return nil
	}
	msg := cmd()
	m.Update(msg)
	return msg
}

func screenText(m *Model) string { return ansi.Strip(m.frame()) }

// waitRun waits for the model's Run goroutines to end and folds in what
// they sent.
func waitRun(m *Model) {
	m.wg.Wait()
	m.Update(feedMsg{})
}

func TestSlashCommands(t *testing.T) {
	dir := t.TempDir()
	for path, body := range map[string]string{
		".claude/commands/review.md": "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs.",
		".cohort/commands/review.md": "---\ndescription: Review a file, carefully\n---\nReview $ARGUMENTS carefully.",
		".claude/commands/ship.md":   "Ship it.",
		".claude/commands/help.md":   "never shadows /help",
	} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, c := offline(t, dir)

	enter(m, "/help")
	scr := screenText(m)
	for _, want := range []string{"/resume", "/cost", "/permissions", "/review", "Review a file, carefully", "/ship", "Ship it.", "ctrl+b background", "/exit"} {
		if !strings.Contains(scr, want) {
			t.Errorf("/help lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "never shadows") {
		t.Errorf("a user command shadowed /help")
	}

	enter(m, "/review main.go")
	waitRun(m)
	enter(m, "/ship now")
	waitRun(m)
	c.mu.Lock()
	got := strings.Join(c.prompts, "|")
	c.mu.Unlock()
	// The session expands them (and fires UserPromptExpansion): the
	// prompt goes as typed.
	if want := "/review main.go|/ship now"; got != want {
		t.Errorf("user commands sent %q, want %q", got, want)
	}

	enter(m, "/model opus")
	if c.model != "opus" || c.modelSource != "command" || !strings.Contains(screenText(m), "model set to opus") {
		t.Errorf("/model opus: the session has %q (source %q)", c.model, c.modelSource)
	}
	enter(m, "/model")
	if scr := screenText(m); !strings.Contains(scr, "opus (current)") || !strings.Contains(scr, "haiku") {
		t.Errorf("/model shows no picker:\n%s", scr)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if c.model != "sonnet" || c.modelSource != "picker" {
		t.Errorf("the picker's second line: the session has %q (source %q), want sonnet from the picker", c.model, c.modelSource)
	}
	enter(m, "/cost")
	if scr := screenText(m); !strings.Contains(scr, "Cost:") || !strings.Contains(scr, "task 0001") || !strings.Contains(scr, "total") {
		t.Errorf("/cost does not list the agents and the total:\n%s", scr)
	}
	enter(m, "/nosuch")
	if !strings.Contains(screenText(m), "unknown command /nosuch") {
		t.Errorf("an unknown command is not reported")
	}
	enter(m, "/clear")
	if scr := screenText(m); !strings.Contains(scr, "new conversation") || strings.Contains(scr, "Cost:") {
		t.Errorf("/clear left the conversation on screen:\n%s", scr)
	}
}

func TestShellAndPathCompletion(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "internal", "tui"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "internal", "tui", "model.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := offline(t, dir)
	msg := enter(m, "!echo hello from $PWD; printf '\\033]0;title\\007'; exit 3")
	if d, ok := msg.(shellDone); !ok || !d.err {
		t.Fatalf("a failing ! command gave %#v", msg)
	}
	m.expanded = true
	scr := screenText(m)
	if !strings.Contains(scr, "hello from "+dir) || !strings.Contains(scr, "exit status 3") {
		t.Errorf("the ! command's output is not shown:\n%s", scr)
	}

	for _, r := range "look at @int" {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if got := m.input.text(); got != "look at @internal/" {
		t.Errorf("@ completion gave %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab}) // the only entry: tui/
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if got := m.input.text(); got != "look at @internal/tui/model.go" {
		t.Errorf("@ completion gave %q", got)
	}
	if got := completePath(dir, "../"); got != nil {
		t.Errorf("completion climbed out of the project: %v", got)
	}
}

func TestHistoryAndMultiline(t *testing.T) {
	m, c := offline(t, t.TempDir())
	enter(m, "first")
	waitRun(m)
	enter(m, "second")
	waitRun(m)
	m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if got := m.input.text(); got != "second" {
		t.Errorf("Up recalled %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	m.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	if got := m.input.text(); got != "first" {
		t.Errorf("Up twice recalled %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	m.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if got := m.input.text(); got != "" {
		t.Errorf("Down past the newest left %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt})
	m.Update(tea.KeyPressMsg{Code: 'b', Text: "b"})
	if got := m.input.text(); got != "a\nb" {
		t.Errorf("Alt+Enter gave %q", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitRun(m)
	c.mu.Lock()
	defer c.mu.Unlock()
	if last := c.prompts[len(c.prompts)-1]; last != "a\nb" {
		t.Errorf("the multi-line prompt went as %q", last)
	}
}

// TestStatusLineRuns: the statusLine command reads the session's JSON and
// its first line, cleaned, shows under the input.
func TestStatusLineRuns(t *testing.T) {
	c := newCrowd(0, time.Now())
	m := newModel(Options{Session: c, Dir: t.TempDir(), Model: "opus",
		StatusLine: `grep -o '"session_id":"[a-z]*"' | tr -d '\n'; printf '\033]0;title\007 on main\nsecond line\n'`})
	m.width, m.high = 80, 10
	t.Cleanup(m.shutdown)
	cmd := m.Init()
	if cmd == nil {
		t.Fatal("Init runs no statusLine")
	}
	m.Update(cmd())
	lines := strings.Split(screenText(m), "\n")
	if got := lines[len(lines)-1]; got != `"session_id":"crowd" on main` {
		t.Errorf("the status line shows %q", got)
	}
}

// TestStatusLineRunner: with Options.RunStatusLine the UI runs nothing
// itself: the runner (the session's sandboxed one) gets the session and
// the JSON, and its first line shows.
func TestStatusLineRunner(t *testing.T) {
	c := newCrowd(0, time.Now())
	var got Session
	var in []byte
	m := newModel(Options{Session: c, Dir: t.TempDir(), Model: "opus",
		StatusLine: "echo ran-by-the-ui > /dev/null; exit 1",
		RunStatusLine: func(_ context.Context, s Session, stdin []byte) ([]byte, error) {
			got, in = s, stdin
			return []byte("from the runner\nsecond\n"), nil
		}})
	m.width, m.high = 80, 10
	t.Cleanup(m.shutdown)
	m.Update(m.Init()())
	lines := strings.Split(screenText(m), "\n")
	if last := lines[len(lines)-1]; last != "from the runner" {
		t.Errorf("the status line shows %q, want the runner's first line", last)
	}
	if got != c || !strings.Contains(string(in), `"session_id":"crowd"`) {
		t.Errorf("the runner got session %v and stdin %s", got, in)
	}
}

// TestTreeKeysAndSecondEsc: in the tree, m messages the selected agent,
// x stops it, Ctrl+B backgrounds it; after Esc interrupted a turn, a
// second Esc offers to stop the agents still running, and y does.
func TestTreeKeysAndSecondEsc(t *testing.T) {
	m, c := offline(t, t.TempDir())
	m.Update(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	m.tree.set(c.Agents())
	m.Update(tea.KeyPressMsg{Code: tea.KeyDown}) // a0000, after the lead
	m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	m.Update(tea.KeyPressMsg{Code: 'b', Mod: tea.ModCtrl})
	m.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	if m.screen != screenChat || !strings.Contains(screenText(m), "@a0000 >") {
		t.Fatalf("m did not open a message to a0000:\n%s", screenText(m))
	}
	enter(m, "look at b.go too")

	// A turn that is running: Esc interrupts, a second Esc asks.
	m.running = true
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	m.running = false
	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if !strings.Contains(screenText(m), "Stop 2 background agent(s) too? (y/n)") {
		t.Fatalf("the second Esc did not ask:\n%s", screenText(m))
	}
	m.Update(tea.KeyPressMsg{Code: 'y', Text: "y"})
	c.mu.Lock()
	got := strings.Join(c.calls, "|")
	c.mu.Unlock()
	want := "stop a0000|background a0000|message a0000: look at b.go too|interrupt|stop a0000|stop a0001"
	if got != want {
		t.Errorf("the session was asked\n %s\nwant\n %s", got, want)
	}
}

// TestNoColor: with NO_COLOR the painter sends no colour, only the
// cursor moves and erases (and bold, faint, reverse, which NO_COLOR
// allows).
func TestNoColor(t *testing.T) {
	var out syncBuffer
	profile := colorprofile.Detect(&out, []string{"NO_COLOR=1", "TERM=xterm-256color"})
	p := newPainter(&out, profile)
	m := hostileModel(t, 60, 20)
	m.paint = p
	m.View()
	p.stop()
	if s := out.String(); regexp.MustCompile(`\x1b\[[0-9;]*(3[0-8]|4[0-8]|9[0-7])[;m]`).MatchString(s) {
		t.Errorf("colour under NO_COLOR: %q", s)
	}
}

// TestMoreCommands: /tasks, /team (with and without teammates), /agents,
// /permissions, /flags, /compact, /exit and /quit.
func TestMoreCommands(t *testing.T) {
	m, c := offline(t, t.TempDir())
	c.mu.Lock()
	c.agents[1].TaskID = "b1234"
	c.mu.Unlock()
	m.opts.Flags = func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, "agent_teams = true (default)\n")
		return err
	}

	enter(m, "/tasks")
	if scr := screenText(m); !strings.Contains(scr, "b1234") || !strings.Contains(scr, "task 0000") {
		t.Errorf("/tasks:\n%s", scr)
	}
	if enter(m, "/team"); !strings.Contains(screenText(m), "Team: no teammates in this session") {
		t.Errorf("/team without teammates does not say so:\n%s", screenText(m))
	}
	c.mu.Lock()
	c.agents = append(c.agents, cohort.AgentInfo{ID: "alice@crew", Name: "alice", Team: "crew", Kind: "teammate", State: cohort.AgentIdle, Type: "reviewer"})
	c.mu.Unlock()
	enter(m, "/team")
	if scr := screenText(m); !strings.Contains(scr, "alice@crew") || !strings.Contains(scr, "reviewer") {
		t.Errorf("/team:\n%s", scr)
	}
	enter(m, "/permissions")
	if !strings.Contains(screenText(m), "permission mode: default") {
		t.Errorf("/permissions:\n%s", screenText(m))
	}
	if msg := enter(m, "/flags"); msg == nil || !strings.Contains(screenText(m), "agent_teams = true (default)") {
		t.Errorf("/flags:\n%s", screenText(m))
	}
	if msg := enter(m, "/compact"); msg == nil || !strings.Contains(screenText(m), "compacted") {
		t.Errorf("/compact:\n%s", screenText(m))
	}
	enter(m, "/agents")
	if m.screen != screenTree || !strings.Contains(screenText(m), "lead idle · 3 agents") {
		t.Errorf("/agents did not show the tree:\n%s", screenText(m))
	}
	for _, c := range []string{"/exit", "/quit"} {
		if msg := enter(m, c); msg != (tea.QuitMsg{}) {
			t.Errorf("%s gave %#v, not a quit", c, msg)
		}
	}
}

// TestWithdrawnPrompt: a permission prompt whose asker stops waiting (its
// context ends: the turn was interrupted, a teammate timed out) leaves
// the screen, and the next one in line shows.
func TestWithdrawnPrompt(t *testing.T) {
	m, _ := offline(t, t.TempDir())
	p := NewPrompts()
	msgs := make(chan tea.Msg, 8)
	p.attach(func(msg tea.Msg) { msgs <- msg })
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := p.CanUseTool(ctx, cohort.PermissionRequest{Tool: "Bash", Input: []byte(`{"command":"make one"}`)})
		first <- err
	}()
	m.Update(<-msgs)
	second := make(chan cohort.Decision, 1)
	go func() {
		d, _ := p.CanUseTool(context.Background(), cohort.PermissionRequest{Tool: "Bash", Input: []byte(`{"command":"make two"}`)})
		second <- d
	}()
	m.Update(<-msgs)
	if scr := screenText(m); !strings.Contains(scr, "make one") || strings.Contains(scr, "make two") {
		t.Fatalf("the first prompt is not the one shown:\n%s", scr)
	}
	cancel()
	if err := <-first; err == nil {
		t.Fatal("a withdrawn prompt returned no error")
	}
	m.Update(<-msgs) // the withdrawal
	if scr := screenText(m); strings.Contains(scr, "make one") || !strings.Contains(scr, "make two") {
		t.Fatalf("after the first was withdrawn the screen shows:\n%s", scr)
	}
	m.Update(tea.KeyPressMsg{Code: '1', Text: "1"})
	if d := <-second; !d.Allow {
		t.Fatalf("the answer was %+v", d)
	}
	if strings.Contains(screenText(m), "Permission") {
		t.Errorf("the dialog stayed after the last answer")
	}
}

// TestCtrlBInTheConversation: Ctrl+B moves the running synchronous
// subagents to the background, and only those.
func TestCtrlBInTheConversation(t *testing.T) {
	m, c := offline(t, t.TempDir())
	c.mu.Lock()
	c.agents[1].Kind = "subagent"
	c.agents[2].Kind, c.agents[2].State = "subagent", cohort.AgentCompleted
	c.mu.Unlock()
	m.Update(tea.KeyPressMsg{Code: 'b', Mod: tea.ModCtrl})
	c.mu.Lock()
	got := strings.Join(c.calls, "|")
	c.mu.Unlock()
	if got != "background a0000" || !strings.Contains(screenText(m), "moved 1 subagent to the background") {
		t.Errorf("Ctrl+B asked %q:\n%s", got, screenText(m))
	}
}
