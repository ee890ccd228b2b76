package cohort

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/transcript"
)

// ErrBusy is returned by Run while another Run of the session is going,
// and by Clear while a turn runs.
var ErrBusy = errors.New("cohort: a turn is running")

// ErrClosed is returned by the methods of a closed Session.
var ErrClosed = errors.New("cohort: the session is closed")

// Session is a running session: a lead (or, with Config.Role, a teammate)
// and everything it may start — subagents, background agents, forks,
// teammates — with their tools, permissions, tasks, transcripts and
// hooks. Run drives it one prompt at a time; the control methods are safe
// to call while a Run is going; Close stops it all.
type Session struct {
	cfg   Config
	parts *assemble.Session // what New opened (package internal/assemble)
	out   *emitter          // every agent's events, for Run (emit.go)
	ctl   control           // the running turn and the session's state
	mode  string            // the session's own agent's permission mode (under ctl.mu)
}

// New assembles a session from cfg: it checks the configuration, opens the
// model, loads settings, agent definitions and hooks, and makes the lead
// (or, with cfg.Role, the teammate), ready for Run. A Config that cannot
// work is a *ConfigError, returned before anything is written under Home.
// Close releases what New opened.
func New(ctx context.Context, cfg Config) (*Session, error) {
	return newSession(ctx, cfg, false)
}

// newSession is New, in a remote job's disposable clone (RemoteRunner).
func newSession(ctx context.Context, cfg Config, disposable bool) (*Session, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	p := cfg.plan()
	p.Disposable = disposable
	if err := assemble.Resolve(ctx, p); err != nil {
		return nil, configError(err)
	}
	if err := assemble.ResolveSession(p); err != nil {
		return nil, configError(err)
	}
	out := newEmitter(p.Session.ID, p.Process.Getenv("TMPDIR"), cfg.PartialMessages)
	p.Events = assemble.Sinks{Engine: out.engine, Task: out.task, Team: out.team}
	parts, err := assemble.Open(ctx, p)
	if err != nil {
		out.q.Close()
		return nil, configError(err)
	}
	s := &Session{cfg: cfg, parts: parts, out: out, mode: string(parts.DefaultMode())}
	out.setLead(parts.LeadID())
	parts.SetWake(cfg.Wake != nil, func(ctx context.Context) {
		cfg.Wake(s.serve(ctx, true, parts.WakeDue, func(t context.Context, o string) Event { return s.turn(t, "", o) }))
	})
	s.ctl.opening = parts.StartSource()
	s.out.push(s.initEvent())
	return s, nil
}

// ID returns the session's id: its transcript's name, what Config.Resume
// takes.
func (s *Session) ID() string { return s.parts.ID() }

// ScriptedModel is the in-process fake API of a session on a scripted
// model (Config.Model "scripted:FILE"), with every request it was sent;
// nil on a real model.
func (s *Session) ScriptedModel() *fakeapi.Server { return s.parts.ScriptedModel() }

// control is the session's state between its methods: whether it is
// closed, the Run going and how to interrupt its turn, and how the next
// prompt opens a conversation.
type control struct {
	mu      sync.Mutex
	closed  bool
	running bool
	cancel  context.CancelCauseFunc // the running turn's
	// opening is the SessionStart source of the next prompt (startup,
	// resume, clear), empty once a prompt has opened the conversation.
	opening string
	driver  sync.WaitGroup
}

// begin starts a Run: ErrClosed or ErrBusy (also when due, if set, says
// the work is no longer due), else the turn's context and how its prompt opens.
func (c *control) begin(ctx context.Context, opens bool, due func() bool) (context.Context, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, "", ErrClosed
	}
	if c.running || (due != nil && !due()) {
		return nil, "", ErrBusy
	}
	turn, cancel := context.WithCancelCause(ctx)
	c.running, c.cancel = true, cancel
	opening := ""
	if opens {
		opening, c.opening = c.opening, ""
	}
	c.driver.Add(1)
	return turn, opening, nil
}

func (c *control) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel(nil)
	}
	c.running, c.cancel = false, nil
}

// interrupt cancels the running turn, if any, as the user's doing.
func (c *control) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel(engine.ErrUserInterrupt)
	}
}

func (c *control) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

func (c *control) isRunning() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// Run sends prompt to the lead and yields everything that follows, from
// every agent of the session, until the lead is idle and nothing it waits
// for is outstanding (background agents, teammates at work): each
// notification or teammate message that arrives meanwhile is a further
// lead turn. The last event is the result (Type "result"); a turn that
// failed or hit a limit is a result with IsError, not an error. The error
// of the sequence is non-nil only when the Run could not happen (ErrClosed,
// ErrBusy) or events could not be read back.
//
// The first Run's first event is the system/init event. Events that
// happened between Runs (background agents still at work) come first.
//
// Breaking out of the loop interrupts the lead's turn, as the Esc key
// does: its synchronous subagents stop with it, while background agents
// and teammates keep running (see Agents) until Close. What was not read
// is yielded by the next Run; nothing is dropped. Cancelling ctx
// interrupts the turn too; the Run then ends with an error result.
//
// A teammate session (Config.Role) works on its prompt from the team file
// and then on its mailbox, until the lead asks it to shut down; Run's
// prompt must be empty.
func (s *Session) Run(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	if s.cfg.Role.IsTeammate() && prompt != "" {
		return func(yield func(Event, error) bool) {
			yield(Event{}, errors.New("cohort: a teammate session works on its team's prompt; call Run with an empty prompt"))
		}
	}
	return s.serve(ctx, true, nil, func(turn context.Context, opening string) Event {
		return s.turn(turn, prompt, opening)
	})
}

// serve runs work (a turn, a dream) as the session's one piece of work at
// a time and yields every event of the session until work is done, then
// work's result. opens says whether work takes the opening of the
// conversation (a prompt does; a dream leaves it for the next prompt); due
// (a wake's) refuses it with ErrBusy at its start when no longer due.
func (s *Session) serve(ctx context.Context, opens bool, due func() bool, work func(ctx context.Context, opening string) Event) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		turn, opening, err := s.ctl.begin(ctx, opens, due)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer s.parts.Kick() // after end: what came meanwhile may start a turn (Config.Wake)
		defer s.ctl.end()
		done := make(chan Event, 1)
		popCtx, stopPop := context.WithCancel(context.Background())
		defer stopPop()
		go func() {
			defer s.ctl.driver.Done()
			defer stopPop()
			done <- work(turn, opening)
		}()
		for {
			ev, err := s.out.q.Pop(popCtx)
			if err == nil {
				if !yield(ev, nil) {
					s.ctl.interrupt()
					<-done
					return
				}
				continue
			}
			if popCtx.Err() == nil {
				yield(Event{}, fmt.Errorf("cohort: read the session's events: %w", err))
				s.ctl.interrupt()
				<-done
				return
			}
			// The work is over: what it queued comes before its result.
			res := <-done
			for {
				ev, err := s.out.q.Pop(popCtx)
				if err != nil {
					break
				}
				if !yield(ev, nil) {
					return
				}
			}
			s.ctl.end() // over before its result is read: a caller may act on it at once (rewind_files)
			yield(res, nil)
			return
		}
	}
}

// turn runs one prompt to the end and returns its result event.
func (s *Session) turn(ctx context.Context, prompt, opening string) Event {
	start := time.Now()
	turns, res, runErr := s.parts.Turn(ctx, prompt, opening)
	s.out.order.Flush(s.out.push)
	if s.cfg.StopAfterRun {
		// The result must be the last event: what still runs is stopped
		// first, so that killed tasks report before it.
		s.parts.EndSession()
		s.parts.EndTeam()
		s.parts.StopTasks()
	}
	r := Event{Type: EventResult, Subtype: engine.StopSuccess, NumTurns: turns}
	mate := s.cfg.Role.IsTeammate()
	switch {
	case mate && runErr == nil:
		r.Result = s.cfg.Role.Name + " shut down"
	case mate && errors.Is(runErr, context.Canceled):
		r.Result = s.cfg.Role.Name + " stopped"
	case runErr != nil:
		r.Subtype, r.IsError, r.Result = engine.StopExecution, true, runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			r.Result = "interrupted: the run was cancelled"
		}
	case res.Stop != engine.StopSuccess:
		r.Subtype, r.IsError, r.Result = res.Stop, true, res.Text
	default:
		r.Result, r.StructuredOutput = res.Text, s.parts.Structured()
	}
	s.finish(&r, start)
	r.Agents = s.agentUsage(time.Now())
	r.DurationAPIMs = s.parts.APITime().Milliseconds()
	r.PermissionDenials = s.out.takeDenials()
	return r
}

// finish completes a result event: the session's usage and cost so far,
// how long the work took, and its ids.
func (s *Session) finish(r *Event, start time.Time) {
	usage, cost, byModel := s.parts.Spending()
	r.Usage, r.TotalCostUSD, r.ModelUsage = &usage, cost, modelUsage(byModel)
	r.DurationMs = time.Since(start).Milliseconds()
	r.SessionID, r.UUID, r.Time = s.ID(), transcript.NewID(), time.Now()
}

// initEvent is the system/init event: the lead's tools, model and mode.
func (s *Session) initEvent() Event {
	ev := Event{Type: EventSystem, Subtype: SubtypeInit, Cwd: s.parts.Process.Cwd, PermissionMode: s.mode,
		APIKeySource: s.parts.KeySource(), Version: Version(), MCPServers: s.MCPServers(), Skills: s.parts.Skills(),
		AddDirs: s.parts.AdditionalDirs()}
	if a := s.parts.MainAgent(); a != nil {
		ev.Tools, ev.Model = a.ToolNames(), a.Info().Model
	}
	for _, t := range s.AgentTypes() {
		ev.AgentTypes = append(ev.AgentTypes, t.Name)
	}
	return ev
}

// Close ends the session: a running turn is interrupted, SessionEnd hooks
// run, teammates are asked to shut down (then forced), every task and
// child process is stopped and waited for, and the transcript is closed.
// It reports what it could not stop. Later calls return nil; the other
// methods then return ErrClosed.
func (s *Session) Close() error {
	s.ctl.mu.Lock()
	if s.ctl.closed {
		s.ctl.mu.Unlock()
		return nil
	}
	s.ctl.closed = true
	if s.ctl.cancel != nil {
		s.ctl.cancel(nil)
	}
	s.ctl.mu.Unlock()
	s.ctl.driver.Wait()
	s.parts.StopAutoDream() // no dream starts after this; one running is a task
	s.parts.EndSession()
	s.parts.EndTeam()
	err := s.parts.StopTasks()
	s.parts.Close()
	s.out.q.Close()
	return err
}
