package tui

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/cohort-dev/cohort/internal/clip"
)

// SessionRow is one session of the machine as the sessions view shows it
// (cohort agents: a background session's record and liveness).
type SessionRow struct {
	ID, Name string
	// State is working, blocked, done, stopped, failed or dead; Status
	// busy, waiting or idle while the process lives.
	State, Status string
	// Detail is the last answer's first line, or what the session waits
	// for; Dir is where it works (its worktree, if it has one).
	Detail, Dir string
	CostUSD     float64
	Agents      int
	// Active is the session's last activity.
	Active time.Time
	Alive  bool
}

// SessionsOptions configure the sessions view.
type SessionsOptions struct {
	// List reads the sessions, newest first; warnings are shown one at a
	// time under the list (a record that could not be read, by path).
	List func(ctx context.Context) (rows []SessionRow, warnings []string, err error)
	// Stop stops a session (x).
	Stop func(ctx context.Context, id string) error
	// Dispatch starts a new background session on prompt with the view's
	// defaults (n) and returns its id.
	Dispatch func(ctx context.Context, prompt string) (id string, err error)
	// Defaults says in a few words where and how Dispatch starts a
	// session ("in /src/app · model opus"), shown as the prompt is typed.
	Defaults string
	// Selected is the id to select first (the session attached before);
	// Notice a line to show first (what the attach said when it failed).
	Selected, Notice string
	// Every is how often the list is read again (default 1 s).
	Every time.Duration
	// Now is the clock for "3s ago" (default time.Now).
	Now func() time.Time
	// Environ and Profile decide the colours, as for Options.
	Environ []string
	Profile *colorprofile.Profile
}

// RunSessions runs the sessions view on the terminal in and out until the
// user quits ("") or chooses a session to attach to (its id).
func RunSessions(ctx context.Context, opts SessionsOptions, in, out *os.File) (string, error) {
	var m *sessionsModel
	err := onTerminal(in, out, opts.Environ, &opts.Profile, func(popts ...tea.ProgramOption) *tea.Program {
		var p *tea.Program
		p, m = newSessionsProgram(ctx, opts, in, out, popts...)
		return p
	})
	if m == nil {
		return "", err
	}
	m.paint.stop()
	return m.chosen, err
}

// newSessionsProgram makes the view's program without running it (tests
// run it on an emulator); stop the model's painter after Run returns.
func newSessionsProgram(ctx context.Context, opts SessionsOptions, in io.Reader, out io.Writer, popts ...tea.ProgramOption) (*tea.Program, *sessionsModel) {
	if opts.Every <= 0 {
		opts.Every = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	profile := colorprofile.ANSI256
	if opts.Profile != nil {
		profile = *opts.Profile
	}
	m := &sessionsModel{ctx: ctx, opts: opts, st: newStyles(), selID: opts.Selected, notice: opts.Notice,
		width: 80, high: 24, paint: newPainter(out, profile)}
	all := append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
		tea.WithoutRenderer(), tea.WithFPS(1)}, popts...)
	return tea.NewProgram(m, all...), m
}

// sessionsModel is the view's state; its fields are the program loop's.
type sessionsModel struct {
	ctx   context.Context
	opts  SessionsOptions
	st    styles
	paint *painter

	rows     []SessionRow
	warnings []string
	listErr  string
	loaded   bool
	selID    string // the selected session, kept by id across reads
	sel      int
	top      int
	stopping map[string]bool
	notice   string

	typing bool // n: a prompt for a new session is being typed
	input  editor

	chosen      string
	width, high int
}

type (
	rowsMsg struct {
		rows     []SessionRow
		warnings []string
		err      error
	}
	sessionsTickMsg struct{}
	stoppedMsg      struct {
		id  string
		err error
	}
	dispatchedMsg struct {
		id, prompt string
		err        error
	}
)

// Init reads the list.
func (m *sessionsModel) Init() tea.Cmd { return m.load() }

// load reads the list off the loop (a socket that does not answer takes
// its probe's time).
func (m *sessionsModel) load() tea.Cmd {
	return func() tea.Msg {
		rows, warnings, err := m.opts.List(m.ctx)
		return rowsMsg{rows, warnings, err}
	}
}

// Update handles one message.
func (m *sessionsModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.high = max(msg.Width, 1), max(msg.Height, 1)
	case tea.PasteMsg:
		if m.typing {
			m.input.insert(msg.Content)
		}
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case rowsMsg:
		m.loaded, m.rows, m.warnings, m.listErr = true, msg.rows, msg.warnings, ""
		if msg.err != nil {
			m.listErr = msg.err.Error()
		}
		m.reselect()
		return m, tea.Tick(m.opts.Every, func(time.Time) tea.Msg { return sessionsTickMsg{} })
	case sessionsTickMsg:
		return m, m.load()
	case stoppedMsg:
		delete(m.stopping, msg.id)
		m.notice = "stopped · " + msg.id
		if msg.err != nil {
			m.notice = "stop " + msg.id + ": " + msg.err.Error()
		}
		return m, m.load()
	case dispatchedMsg:
		m.notice = "started · " + msg.id + " · " + msg.prompt
		if msg.err != nil {
			m.notice = "new session: " + msg.err.Error()
		} else {
			m.selID = msg.id
		}
		return m, m.load()
	}
	return m, nil
}

// reselect finds the selected session again after a read: by its id, or
// at the same place when it has left the list.
func (m *sessionsModel) reselect() {
	for i, r := range m.rows {
		if r.ID == m.selID {
			m.sel = i
			return
		}
	}
	m.sel = min(max(m.sel, 0), max(len(m.rows)-1, 0))
	if len(m.rows) > 0 {
		m.selID = m.rows[m.sel].ID
	}
}

func (m *sessionsModel) move(step int) {
	if len(m.rows) == 0 {
		return
	}
	m.sel = min(max(m.sel+step, 0), len(m.rows)-1)
	m.selID = m.rows[m.sel].ID
}

func (m *sessionsModel) key(k tea.KeyPressMsg) tea.Cmd {
	if m.typing {
		return m.typingKey(k)
	}
	switch k.String() {
	case "ctrl+c", "ctrl+d", "q", "esc":
		return tea.Quit
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "pgup":
		m.move(-max(m.high-6, 1))
	case "pgdown":
		m.move(max(m.high-6, 1))
	case "enter":
		if len(m.rows) > 0 {
			m.chosen = m.rows[m.sel].ID
			return tea.Quit
		}
	case "n":
		m.typing, m.notice = true, ""
	case "x":
		return m.stop()
	}
	return nil
}

// stop stops the selected session, off the loop (stopping waits for the
// process to end).
func (m *sessionsModel) stop() tea.Cmd {
	if len(m.rows) == 0 {
		return nil
	}
	r := m.rows[m.sel]
	if !r.Alive {
		m.notice = r.ID + " is not running (" + r.State + ")"
		return nil
	}
	if m.stopping == nil {
		m.stopping = map[string]bool{}
	}
	m.stopping[r.ID] = true
	return func() tea.Msg { return stoppedMsg{r.ID, m.opts.Stop(m.ctx, r.ID)} }
}

// typingKey edits the new session's prompt: Enter dispatches it, Esc
// gives up.
func (m *sessionsModel) typingKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc", "ctrl+c":
		m.typing = false
		m.input.set("")
		return nil
	case "enter":
		prompt := m.input.submit()
		if prompt == "" {
			return nil
		}
		m.typing = false
		m.notice = "starting a session…"
		return func() tea.Msg {
			id, err := m.opts.Dispatch(m.ctx, prompt)
			return dispatchedMsg{id, oneLine(prompt, 40), err}
		}
	}
	m.input.key(k, "")
	return nil
}

func oneLine(s string, n int) string {
	return clip.Runes(Clean(strings.ReplaceAll(s, "\n", " "), false), n)
}

// View hands the frame to the painter.
func (m *sessionsModel) View() tea.View {
	m.paint.set(m.frame(), m.width, m.high)
	return tea.View{}
}
