package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort"
)

// refreshEvery bounds how often the tree is rebuilt from a snapshot while
// events pour in; clockEvery is how often elapsed times move while agents
// run (never when nothing does).
const (
	refreshEvery = 100 * time.Millisecond
	clockEvery   = time.Second
)

type screen int

const (
	screenChat screen = iota
	screenTree
)

// Model is the UI's state. It is the bubbletea model; every field is
// owned by the program's loop (Update and View), except what the
// goroutines it starts hand back through the feed.
type Model struct {
	opts  Options
	sess  Session
	feed  *feed
	st    styles
	now   func() time.Time
	width int
	high  int

	// life is the context of the goroutines the model starts (Runs, shell
	// commands, the statusLine); shutdown cancels it and waits for them.
	life context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	chat     *transcript
	agents   map[string]*transcript // every other agent's, by id
	tree     tree
	tasks    taskLog // every task the session reported, for /tasks
	input    editor
	screen   screen
	expanded bool

	running   bool
	gen       int            // the Run whose events are coming
	queue     []cohort.Typed // typed ahead, not yet in the conversation
	mode      string
	bypassOK  bool // started in bypassPermissions: the cycle may return to it
	model     string
	interrupt bool // Esc stopped the turn; a second Esc offers to stop the rest
	escArmed  bool // Esc on an empty input while idle: a second Esc rewinds
	// rewindAfter is a rewind asked for while an interrupted turn was
	// still ending: its list opens as the turn ends.
	rewindAfter bool

	dialog        dialog
	prompts       []dialog // waiting behind the one shown
	focused       bool
	refreshing    bool
	clockRunning  bool
	messageTarget string  // the agent the input writes to (tree: m)
	status        string  // the statusLine's output
	pendingCmd    tea.Cmd // a command a dialog's answer started

	paint   *painter
	renders atomic.Int64
}

func newModel(opts Options) *Model {
	life, stop := context.WithCancel(context.Background())
	m := &Model{opts: opts, sess: opts.Session, feed: &feed{}, st: newStyles(), now: opts.Now,
		life: life, stop: stop, chat: newTranscript(), agents: map[string]*transcript{},
		mode: opts.Mode, model: opts.Model, width: 80, high: 24, focused: true}
	if m.now == nil {
		m.now = time.Now
	}
	m.tree.tasks = &m.tasks
	if m.mode == "" {
		m.mode = "default"
	}
	m.bypassOK = m.mode == "bypassPermissions"
	return m
}

// Renders counts the frames the model has drawn (View calls): an idle UI
// draws none.
func (m *Model) Renders() int64 { return m.renders.Load() }

// shutdown stops what the model started, gives the terminal back and
// closes its sessions.
func (m *Model) shutdown() {
	m.stop()
	if m.paint != nil {
		m.paint.stop()
	}
	if m.opts.Prompts != nil {
		m.opts.Prompts.close()
	}
	if m.sess != nil {
		m.sess.Interrupt()
	}
	m.wg.Wait()
	if m.sess != nil {
		m.sess.Close()
	}
}

// Init draws the tree once and sends the first prompt, if any.
func (m *Model) Init() tea.Cmd {
	m.tree.set(m.sess.Agents())
	if m.opts.Prompt != "" {
		m.submitPrompt(m.opts.Prompt)
	}
	return m.statusCmd()
}

type refreshMsg struct{}
type clockMsg struct{}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.high = max(msg.Width, 1), max(msg.Height, 1)
	case tea.FocusMsg:
		m.focused = true
	case tea.BlurMsg:
		m.focused = false
	case tea.PasteMsg:
		if m.dialog != nil {
			return m, m.dialogKey(tea.KeyPressMsg{Text: msg.Content})
		}
		m.input.insert(msg.Content)
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case feedMsg:
		return m, m.fold(m.feed.take())
	case feedAgainMsg:
		evs, ends := m.feed.settle()
		if len(evs) == 0 && len(ends) == 0 {
			return m, nil
		}
		return m, m.fold(evs, ends)
	case refreshMsg:
		m.refreshing = false
		m.refresh()
		return m, m.clockCmd()
	case clockMsg:
		m.clockRunning = false
		m.refresh()
		return m, m.clockCmd()
	case permissionMsg, askMsg, planMsg:
		return m, m.arrive(msg)
	case withdrawMsg:
		m.withdraw(msg.ctx)
	case wakeMsg:
		m.startWoken(msg)
	case shellDone:
		m.chat.add(&entry{kind: entryTool, text: "!" + Clean(msg.cmd, false), result: Clean(msg.out, true), isErr: msg.err, done: true})
	case statusMsg:
		m.status = msg.text
	case resumedMsg:
		m.resumed(msg)
	case sessionsMsg:
		m.pickSession(msg)
	case turnsMsg:
		m.pickTurn(msg)
	case rewindPlanMsg:
		m.showRewindPlan(msg)
	case rewoundMsg:
		m.rewound(msg)
	case textMsg:
		m.chat.note(entryNote, msg.text)
	}
	return m, nil
}

// fold takes in what the Runs sent since the last look, and looks again
// a frame later.
func (m *Model) fold(evs []cohort.Event, ends []runEnd) tea.Cmd {
	dirty := false
	m.typedAhead()
	for _, ev := range evs {
		if m.event(ev) {
			dirty = true
		}
	}
	// What the lead has read goes into the conversation now, not with its
	// next reply: that may be a long request away, and the line saying
	// "queued" would be stale meanwhile.
	m.placeTyped(time.Time{})
	for _, e := range ends {
		if e.gen != m.gen {
			continue
		}
		m.running = false
		dirty = true
		if e.err != nil {
			m.chat.note(entryError, e.err.Error())
		}
		m.typedAhead()
		m.placeTyped(time.Time{})
		// The totals are the session's (Agents), taken as the Run ends:
		// the footer's total and the status bar's agree from this frame.
		m.refresh()
	}
	cmds := []tea.Cmd{tea.Tick(frameGap, func(time.Time) tea.Msg { return feedAgainMsg{} })}
	if m.rewindAfter && !m.running {
		m.rewindAfter = false
		cmds = append(cmds, m.listTurns())
	}
	if len(ends) > 0 {
		cmds = append(cmds, m.statusCmd())
	}
	if dirty {
		cmds = append(cmds, m.refreshCmd())
	}
	return tea.Batch(cmds...)
}

// event folds one event in; it reports whether the tree may have changed.
func (m *Model) event(ev cohort.Event) bool {
	switch ev.Type {
	case cohort.EventResult:
		switch {
		case ev.IsError && m.interrupt && strings.HasPrefix(ev.Result, "interrupted"):
			// The interrupt has its line already ("interrupted by you").
		case ev.IsError:
			m.chat.note(entryError, ev.Result)
		default:
			turns := "turns"
			if ev.NumTurns == 1 {
				turns = "turn"
			}
			m.chat.note(entryNote, fmt.Sprintf("done in %d %s · %s this session", ev.NumTurns, turns, cost(ev.TotalCostUSD)))
		}
		return true
	case cohort.EventSystem:
		switch ev.Subtype {
		case cohort.SubtypeInit:
			if ev.PermissionMode != "" {
				m.mode = ev.PermissionMode
			}
			if ev.Model != "" {
				m.model = ev.Model
			}
			return false
		case cohort.SubtypeAPIRetry:
			m.chat.note(entryNote, ev.Error)
			return false
		case cohort.SubtypeCompactBoundary:
			m.chat.note(entryNote, fmt.Sprintf("conversation compacted (%s tokens before)", tokens(ev.PreTokens)))
			return false
		case cohort.SubtypeTaskStarted, cohort.SubtypeTaskProgress, cohort.SubtypeTaskNotification:
			m.tasks.note(ev)
			return true
		case cohort.SubtypeTeam:
			if t := ev.Team; t != nil && t.Kind == cohort.TeamMessage {
				m.chat.note(entryNote, fmt.Sprintf("%s → %s: %s", t.From, t.To, teamText(t.Text)))
			}
			return true
		}
		return true
	}
	t := m.chat
	if ev.ParentToolUseID != "" || strings.Contains(ev.AgentID, "@") {
		t = m.agents[ev.AgentID]
		if t == nil {
			t = newTranscript()
			m.agents[ev.AgentID] = t
		}
	}
	if t == m.chat && (ev.Type == cohort.EventAssistant || ev.Type == cohort.EventStream) {
		m.placeTyped(ev.Time)
	}
	t.event(ev)
	return ev.Type == cohort.EventAssistant || ev.Type == cohort.EventUser
}

// typedAhead learns from the session which queued texts the lead has
// read, and when.
func (m *Model) typedAhead() {
	if len(m.queue) == 0 {
		return
	}
	j := 0
	for j < len(m.queue) && !m.queue[j].Read.IsZero() {
		j++
	}
	for _, p := range m.sess.Pending() {
		if j < len(m.queue) {
			m.queue[j].Read = p.Read
			j++
		}
	}
}

// placeTyped moves the queued texts the lead read before t into the
// conversation: they come before the first message it wrote after
// reading them (all of them, with t zero: the Run is over).
func (m *Model) placeTyped(t time.Time) {
	for len(m.queue) > 0 && !m.queue[0].Read.IsZero() && (t.IsZero() || m.queue[0].Read.Before(t)) {
		m.chat.add(&entry{kind: entryUser, text: Clean(m.queue[0].Text, true)})
		m.queue = m.queue[1:]
	}
}

// refreshCmd rebuilds the tree soon, once for any number of events.
func (m *Model) refreshCmd() tea.Cmd {
	if m.refreshing {
		return nil
	}
	m.refreshing = true
	return tea.Tick(refreshEvery, func(time.Time) tea.Msg { return refreshMsg{} })
}

// clockCmd keeps elapsed times moving while agents run, and stops when
// none does.
func (m *Model) clockCmd() tea.Cmd {
	if m.clockRunning || !m.tree.anyRunning() {
		return nil
	}
	m.clockRunning = true
	// Not tea.Tick: a tick the program never takes would outlive it by up
	// to a second; this one ends with the model (shutdown). (Not
	// m.background either: the program may never run it, and shutdown
	// would wait for it.)
	ctx := m.life
	return func() tea.Msg {
		t := time.NewTimer(clockEvery)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return clockMsg{}
	}
}

func (m *Model) refresh() {
	m.tree.set(m.sess.Agents())
}

// submitPrompt sends text to the lead: a new Run when none is going,
// else typed ahead into the running one.
func (m *Model) submitPrompt(text string) {
	if m.messageTarget != "" {
		target := m.messageTarget
		m.messageTarget = ""
		if err := m.sess.Message(target, text); err != nil {
			m.chat.note(entryError, err.Error())
		} else {
			m.chat.note(entryNote, fmt.Sprintf("message sent to %s", target))
		}
		return
	}
	if m.running {
		if err := m.sess.Send(text); err != nil {
			m.chat.note(entryError, err.Error())
			return
		}
		m.queue = append(m.queue, cohort.Typed{Text: text})
		return
	}
	m.chat.add(&entry{kind: entryUser, text: Clean(text, true)})
	m.startRun(text)
}

func (m *Model) startRun(text string) {
	m.gen++
	gen, sess, f := m.gen, m.sess, m.feed
	m.running, m.interrupt = true, false
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		var err error
		for ev, e := range sess.Run(m.life, text) {
			if e != nil {
				err = e
				break
			}
			f.push(ev)
		}
		f.end(runEnd{gen: gen, err: err})
	}()
}

// startWoken shows a turn the session started itself (Prompts.Wake) as a
// Run of the user's: the lead is busy meanwhile, and what is typed joins
// it. When the user's own Run is going, that Run reads the message and
// this one ends at once (cohort.ErrBusy); its end is not the UI's.
func (m *Model) startWoken(w wakeMsg) {
	own := !m.running
	if own {
		m.gen++
		m.running, m.interrupt = true, false
		m.chat.note(entryNote, "a message from another session woke the lead")
	}
	gen, f, life := m.gen, m.feed, m.life
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer close(w.done)
		var err error
		for ev, e := range w.run {
			if e != nil {
				if !errors.Is(e, cohort.ErrBusy) && !errors.Is(e, cohort.ErrClosed) {
					err = e
				}
				break
			}
			if life.Err() != nil {
				break // the UI is ending: breaking out interrupts the turn
			}
			if ev.Type == cohort.EventResult && ev.NumTurns == 0 && !ev.IsError {
				continue // a Run read the message first: nothing happened
			}
			f.push(ev)
		}
		if own {
			f.end(runEnd{gen: gen, err: err})
		}
	}()
}

// View draws the frame.
func (m *Model) View() tea.View {
	m.renders.Add(1)
	m.paint.set(m.frame(), m.width, m.high)
	return tea.View{}
}

// frame is the screen as text: the conversation or the tree on top, the
// dialog or the input below, the status line last. Every line fits the
// width and the frame the height, down to a 20×5 terminal.
func (m *Model) frame() string {
	w, h := m.width, m.high
	bottom := m.bottom(w, h)
	if len(bottom) > h-1 {
		bottom = bottom[len(bottom)-max(h-1, 1):]
	}
	top := max(h-len(bottom), 0)
	var lines []string
	switch m.screen {
	case screenTree:
		list := max(top/2, min(top, 3))
		if len(m.tree.rows)+2 < list {
			list = len(m.tree.rows) + 2
		}
		lines = append(lines, m.tree.view(w, list, m.now(), m.st)...)
		if a, ok := m.tree.current(); ok {
			tr := m.chat
			if a.Kind != "lead" {
				tr = m.agents[a.ID]
			}
			lines = append(lines, m.tree.detail(tr, w, top-len(lines), m.now(), m.expanded, m.st)...)
		}
	default:
		lines = m.chat.tail(w, top, m.expanded, m.st)
	}
	for len(lines) < top {
		lines = append([]string{""}, lines...)
	}
	if len(lines) > top {
		lines = lines[len(lines)-top:]
	}
	lines = append(lines, bottom...)
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	return strings.Join(lines, "\n")
}

// bottom is the dialog, or the queue and the input, then the status.
func (m *Model) bottom(w, h int) []string {
	var out []string
	out = append(out, m.st.border.Render(strings.Repeat("─", w)))
	if d, ok := m.dialog.(*permissionDialog); ok {
		// A prompt may take the whole screen but a line of the
		// conversation, the border and the status.
		room := h - 3
		if m.status != "" {
			room--
		}
		out = append(out, d.viewIn(w, max(room, 1), m.st)...)
	} else if m.dialog != nil {
		out = append(out, m.dialog.view(w, m.st)...)
	} else {
		for _, q := range m.queue {
			out = append(out, m.st.dim.Render(cut("  queued: "+Clean(firstLine(q.Text), false), w)))
		}
		prompt := "> "
		if m.messageTarget != "" {
			prompt = "@" + Clean(m.messageTarget, false) + " > "
		}
		in := m.input.view(prompt, w, m.st)
		if len(in) > 6 {
			in = in[len(in)-6:]
		}
		out = append(out, in...)
	}
	out = append(out, m.statusBar(w))
	if m.status != "" {
		out = append(out, m.st.dim.Render(cut(m.status, w)))
	}
	return out
}

func (m *Model) statusBar(w int) string {
	left := modeText(m.mode)
	if m.running {
		left = "◐ working · esc to interrupt · " + left
	}
	right := fmt.Sprintf("%s · %d agents · %s · ctrl+t tree", Clean(m.model, false), m.tree.total.agents, cost(m.tree.total.cost))
	if m.screen == screenTree {
		right = "↑↓ select · m message · x stop · ctrl+b background · esc back"
	}
	gap := w - len([]rune(left)) - len([]rune(right))
	if gap < 1 {
		return m.st.dim.Render(cut(left, w))
	}
	return m.st.dim.Render(left + strings.Repeat(" ", gap) + right)
}

func modeText(mode string) string {
	switch mode {
	case "acceptEdits":
		return "⏵⏵ accept edits on (shift+tab to cycle)"
	case "plan":
		return "⏸ plan mode on (shift+tab to cycle)"
	case "bypassPermissions":
		return "⏵⏵ bypass permissions on (shift+tab to cycle)"
	case "dontAsk":
		return "don't ask mode (shift+tab to cycle)"
	}
	return "default mode (shift+tab to cycle)"
}

// nextMode is the mode Shift+Tab moves to: default, acceptEdits, plan,
// and bypassPermissions only for a session that started in it.
func nextMode(cur string, bypassOK bool) string {
	cycle := []string{"default", "acceptEdits", "plan"}
	if bypassOK {
		cycle = append(cycle, "bypassPermissions")
	}
	for i, c := range cycle {
		if c == cur {
			return cycle[(i+1)%len(cycle)]
		}
	}
	return "default"
}
