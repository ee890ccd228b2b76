package tui

import (
	"context"
	"io"
	"iter"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort"
)

// Session is what the UI needs of a cohort.Session (which satisfies it);
// the benchmark drives the UI with a stand-in that makes a thousand agents
// cheaply. Its methods are called from the UI's goroutines and must be safe
// for concurrent use, as cohort.Session's are.
type Session interface {
	ID() string
	Run(ctx context.Context, prompt string) iter.Seq2[cohort.Event, error]
	Send(text string) error
	Pending() []string
	Interrupt() error
	SetPermissionMode(mode string) error
	SetModel(model string) error
	Agents() []cohort.AgentInfo
	StopAgent(id string) error
	Background(id string) error
	Message(id, text string) error
	Compact(ctx context.Context) error
	Clear() error
	Close() error
}

// Options configure the UI.
type Options struct {
	// Session is the session the UI drives; the UI closes it (and any it
	// opens with Resume) when it ends.
	Session Session
	// Prompts carries the session's permission prompts and questions to
	// the UI: pass its CanUseTool and AskUser in the session's Config.
	Prompts *Prompts
	// Mode is the permission mode the session started in; Model its model.
	Mode  string
	Model string
	// Dir is the project directory: @ completes paths under it, ! runs
	// commands in it, and user commands are read from it.
	Dir string
	// Prompt, when set, is sent as soon as the UI starts (cohort "prompt").
	Prompt string
	// Sessions lists the project's sessions for /resume; Resume opens a
	// session that continues one of them (the UI closes the old one).
	Sessions func(ctx context.Context) ([]cohort.SessionSummary, error)
	Resume   func(ctx context.Context, id string) (Session, error)
	// Flags writes the session's feature flags (/flags).
	Flags func(ctx context.Context, w io.Writer) error
	// StatusLine is the settings' statusLine command (Claude Code's shape:
	// {"type": "command", "command": …}); empty for none.
	StatusLine string
	// Notify runs the Notification hook and rings the terminal when a
	// prompt waits (see notify.go); nil rings only.
	Notify func(ctx context.Context, message string)
	// Now is the clock for elapsed times (default time.Now).
	Now func() time.Time
}

// Run runs the UI on in and out until the user quits or ctx ends.
func Run(ctx context.Context, opts Options, in io.Reader, out io.Writer, popts ...tea.ProgramOption) error {
	p, m := NewProgram(ctx, opts, in, out, popts...)
	_, err := p.Run()
	m.shutdown()
	return err
}

// NewProgram makes the program without running it (tests run it and send
// it keys); call the model's shutdown after Run returns.
func NewProgram(ctx context.Context, opts Options, in io.Reader, out io.Writer, popts ...tea.ProgramOption) (*tea.Program, *Model) {
	m := newModel(opts)
	all := append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)}, popts...)
	p := tea.NewProgram(m, all...)
	m.feed.send = p.Send
	if opts.Prompts != nil {
		opts.Prompts.attach(p.Send)
	}
	return p, m
}

// feed carries a session's events into the program in batches: one
// message stands for everything that arrived since the UI last looked, so
// 5,000 events a second make as many updates as the UI can draw, not
// 5,000.
type feed struct {
	send func(tea.Msg)

	mu      sync.Mutex
	events  []cohort.Event
	ends    []runEnd
	pending bool
}

type feedMsg struct{}

// runEnd says that a Run is over.
type runEnd struct {
	gen int
	err error
}

func (f *feed) push(ev cohort.Event) {
	f.mu.Lock()
	f.events = append(f.events, ev)
	f.signalLocked()
}

func (f *feed) end(e runEnd) {
	f.mu.Lock()
	f.ends = append(f.ends, e)
	f.signalLocked()
}

// signalLocked unlocks f, sending one feedMsg if none is waiting.
func (f *feed) signalLocked() {
	wake := !f.pending
	f.pending = true
	f.mu.Unlock()
	if wake {
		f.send(feedMsg{})
	}
}

func (f *feed) take() ([]cohort.Event, []runEnd) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs, ends := f.events, f.ends
	f.events, f.ends, f.pending = nil, nil, false
	return evs, ends
}

// ProgramEnv passes the process's environment to the program, so that
// NO_COLOR, TERM and COLORTERM decide its colours.
func ProgramEnv(environ []string) []tea.ProgramOption {
	return []tea.ProgramOption{tea.WithEnvironment(environ)}
}
