package tui

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

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
	Pending() []cohort.Typed
	Interrupt() error
	SetPermissionMode(mode string) error
	// SetModelFrom switches the model; source is "command" (/model name)
	// or "picker".
	SetModelFrom(model, source string) error
	Agents() []cohort.AgentInfo
	StopAgent(id string) error
	Background(id string) error
	Message(id, text string) error
	Compact(ctx context.Context) error
	Clear() error
	// Rewind lists the checkpoints (turn 0) or rewinds to one (/rewind).
	Rewind(ctx context.Context, r cohort.RewindRequest) (*cohort.RewindReport, error)
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
	// RunStatusLine runs StatusLine for session s with stdin and returns
	// its stdout: the session's own runner (cohort.Session.RunStatusLine,
	// confined by its sandbox). Nil runs it with /bin/sh as the UI's child
	// (tests).
	RunStatusLine func(ctx context.Context, s Session, stdin []byte) ([]byte, error)
	// Now is the clock for elapsed times (default time.Now).
	Now func() time.Time
	// Environ is the environment (NO_COLOR, TERM, COLORTERM decide the
	// colours); Profile, when set, is the colour profile instead.
	Environ []string
	Profile *colorprofile.Profile
}

// Run runs the UI on the terminal in and out until the user quits or ctx
// ends: in raw mode, following the terminal's size.
func Run(ctx context.Context, opts Options, in, out *os.File) error {
	var m *Model
	err := onTerminal(in, out, opts.Environ, &opts.Profile, func(popts ...tea.ProgramOption) *tea.Program {
		var p *tea.Program
		p, m = NewProgram(ctx, opts, in, out, popts...)
		return p
	})
	if m != nil {
		m.shutdown()
	}
	return err
}

// onTerminal runs the program start makes on the terminal in and out: in
// raw mode, at the terminal's size, following its resizes (the program's
// own watch is off with its renderer). It fills *profile from the
// terminal and environ when it is nil.
func onTerminal(in, out *os.File, environ []string, profile **colorprofile.Profile, start func(...tea.ProgramOption) *tea.Program) error {
	state, err := term.MakeRaw(in.Fd())
	if err != nil {
		return fmt.Errorf("terminal raw mode: %w", err)
	}
	defer term.Restore(in.Fd(), state)
	w, h, err := term.GetSize(out.Fd())
	if err != nil {
		return fmt.Errorf("terminal size: %w", err)
	}
	if *profile == nil {
		p := colorprofile.Detect(out, environ)
		*profile = &p
	}
	p := start(tea.WithWindowSize(w, h), tea.WithEnvironment(environ))
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-winch:
				if w, h, err := term.GetSize(out.Fd()); err == nil {
					p.Send(tea.WindowSizeMsg{Width: w, Height: h})
				}
			case <-stop:
				return
			}
		}
	}()
	_, err = p.Run()
	signal.Stop(winch)
	close(stop)
	wg.Wait()
	return err
}

// NewProgram makes the program without running it (tests run it on an
// emulator and send it keys); call the model's shutdown after Run returns.
// The model draws with its own painter, so the program's renderer is off.
func NewProgram(ctx context.Context, opts Options, in io.Reader, out io.Writer, popts ...tea.ProgramOption) (*tea.Program, *Model) {
	m := newModel(opts)
	profile := colorprofile.ANSI256
	if opts.Profile != nil {
		profile = *opts.Profile
	}
	m.paint = newPainter(out, profile)
	all := append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
		tea.WithoutRenderer(), tea.WithFPS(1)}, popts...)
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

// take returns what came. The feed stays quiet (no feedMsg) until
// settle: under a flood the loop looks once a frame, not once an event.
func (f *feed) take() ([]cohort.Event, []runEnd) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs, ends := f.events, f.ends
	f.events, f.ends = nil, nil
	return evs, ends
}

// settle ends a quiet spell: it returns what came meanwhile, and when
// nothing did, the next push wakes the loop again.
func (f *feed) settle() ([]cohort.Event, []runEnd) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs, ends := f.events, f.ends
	f.events, f.ends = nil, nil
	if len(evs) == 0 && len(ends) == 0 {
		f.pending = false
	}
	return evs, ends
}

// frameGap is the quiet spell after a batch of events: about a 60 Hz
// frame.
const frameGap = 16 * time.Millisecond

type feedAgainMsg struct{}
