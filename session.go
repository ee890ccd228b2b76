package cohort

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/transcript"
)

// ErrBusy is returned by Run while another Run of the session is going,
// and by Clear while a turn runs.
var ErrBusy = errors.New("cohort: a turn is running")

// New assembles a session from cfg: it checks the configuration, opens the
// model, loads settings, agent definitions and hooks, and makes the lead
// (or, with cfg.Role, the teammate), ready for Run. A Config that cannot
// work is a *ConfigError, returned before anything is written under Home.
// Close releases what New opened.
func New(ctx context.Context, cfg Config) (*Session, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return nil, err
	}
	s := &Session{base: b, cfg: cfg, usage: newCounter()}
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	s.out.push(s.initEvent())
	return s, nil
}

// ID returns the session's id: its transcript's name, what Config.Resume
// takes.
func (s *Session) ID() string { return s.id }

// control is the session's state between its methods: whether it is
// closed, the Run going and how to interrupt its turn, and how the next
// prompt opens a conversation.
type control struct {
	mu      sync.Mutex
	closed  bool
	running bool
	cancel  context.CancelFunc // the running turn's
	// opening is the SessionStart source of the next prompt (startup,
	// resume, clear), empty once a prompt has opened the conversation.
	opening string
	ended   bool // the SessionEnd hooks ran
	driver  sync.WaitGroup
}

// begin starts a Run: ErrClosed or ErrBusy, else the turn's context and
// how its prompt opens.
func (c *control) begin(ctx context.Context, opens bool) (context.Context, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, "", ErrClosed
	}
	if c.running {
		return nil, "", ErrBusy
	}
	turn, cancel := context.WithCancel(ctx)
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
		c.cancel()
	}
	c.running, c.cancel = false, nil
}

// interrupt cancels the running turn, if any, and reports whether there
// was one.
func (c *control) interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		return false
	}
	c.cancel()
	return true
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
	return s.serve(ctx, true, func(turn context.Context, opening string) Event {
		return s.turn(turn, prompt, opening)
	})
}

// serve runs work (a turn, a dream) as the session's one piece of work at
// a time and yields every event of the session until work is done, then
// work's result. opens says whether work takes the opening of the
// conversation (a prompt does; a dream leaves it for the next prompt).
func (s *Session) serve(ctx context.Context, opens bool, work func(ctx context.Context, opening string) Event) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		turn, opening, err := s.ctl.begin(ctx, opens)
		if err != nil {
			yield(Event{}, err)
			return
		}
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
			yield(res, nil)
			return
		}
	}
}

// turn runs one prompt to the end and returns its result event.
func (s *Session) turn(ctx context.Context, prompt, opening string) Event {
	start := time.Now()
	var (
		turns  int
		res    *engine.Result
		runErr error
	)
	if s.mate != nil {
		runErr = s.mate.Run(ctx)
	} else {
		turns, res, runErr = s.drive(ctx, prompt, opening)
		s.afterTurn() // the dream's gates: in the background, never in the way
	}
	if s.cfg.StopAfterRun {
		// The result must be the last event: what still runs is stopped
		// first, so that killed tasks report before it.
		s.endSession()
		s.endTeam()
		s.stopTasks()
	}
	r := Event{Type: EventResult, Subtype: engine.StopSuccess, NumTurns: turns,
		DurationMs: time.Since(start).Milliseconds()}
	switch {
	case s.mate != nil && runErr == nil:
		r.Result = s.cfg.Role.Name + " shut down"
	case s.mate != nil && errors.Is(runErr, context.Canceled):
		r.Result = s.cfg.Role.Name + " stopped"
	case runErr != nil:
		r.Subtype, r.IsError, r.Result = engine.StopExecution, true, runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			r.Result = "interrupted: the run was cancelled"
		}
	case res.Stop != engine.StopSuccess:
		r.Subtype, r.IsError, r.Result = res.Stop, true, res.Text
	default:
		r.Result, r.StructuredOutput = res.Text, s.structured
	}
	usage, cost, byModel := s.spending()
	r.Usage, r.TotalCostUSD, r.ModelUsage = &usage, cost, byModel
	r.Agents = s.agentUsage(time.Now())
	r.DurationAPIMs = s.usage.apiTime().Milliseconds()
	r.PermissionDenials = s.out.takeDenials()
	r.SessionID, r.UUID, r.Time = s.id, transcript.NewID(), time.Now()
	return r
}

// initEvent is the system/init event: the lead's tools, model and mode.
func (s *Session) initEvent() Event {
	ev := Event{Type: EventSystem, Subtype: SubtypeInit, Cwd: s.cwd, PermissionMode: s.modeName}
	if s.lead != nil {
		ev.Tools, ev.Model = s.lead.ToolNames(), s.lead.Info().Model
	} else if s.mate != nil {
		ev.Tools, ev.Model = s.mate.Agent().ToolNames(), s.mate.Agent().Info().Model
	}
	ev.APIKeySource = s.model.keySource(s.inv.Getenv)
	ev.Version = Version()
	if s.cat != nil {
		for _, d := range s.cat.List() {
			ev.AgentTypes = append(ev.AgentTypes, d.Name)
		}
	}
	ev.MCPServers = s.mcpServers()
	for _, sk := range s.skills.All() {
		ev.Skills = append(ev.Skills, sk.Name)
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
		s.ctl.cancel()
	}
	s.ctl.mu.Unlock()
	s.ctl.driver.Wait()
	if s.mem.auto != nil {
		s.mem.auto.Close() // no dream starts after this; one running is a task
	}
	s.endSession()
	s.endTeam()
	err := s.stopTasks()
	s.close()
	s.out.q.Close()
	return err
}

// endSession fires the SessionEnd hooks once, with a deadline of their
// own: the run's context may be cancelled already (Ctrl-C).
func (s *Session) endSession() {
	s.ctl.mu.Lock()
	ended := s.ctl.ended
	s.ctl.ended = true
	s.ctl.mu.Unlock()
	if ended || s.lead == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.hookMessages(s.hookScope(s.lead).SessionEnd(ctx, hook.EndOther))
}
