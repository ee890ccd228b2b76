package tui

import (
	"context"
	"errors"
	"iter"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort"
)

// Prompts brings the session's permission prompts, AskUserQuestion calls
// and teammates' plans, which arrive on agents' goroutines, into the UI,
// and their answers back. Its CanUseTool, AskUser and ApprovePlan go in
// the session's Config. Safe for
// concurrent use; a prompt made before the UI runs waits for it, and one
// whose context ends is withdrawn from the screen.
type Prompts struct {
	mu    sync.Mutex
	send  func(tea.Msg)
	early []tea.Msg
	done  chan struct{}
	once  sync.Once
}

// NewPrompts returns Prompts for one UI.
func NewPrompts() *Prompts { return &Prompts{done: make(chan struct{})} }

// errUIGone answers prompts once the UI has ended.
var errUIGone = errors.New("the terminal UI has ended")

type permissionMsg struct {
	req   cohort.PermissionRequest
	view  approval
	reply chan cohort.Decision
	ctx   context.Context
}

type askMsg struct {
	req   cohort.AskRequest
	reply chan map[string]string
	ctx   context.Context
}

type planMsg struct {
	req   cohort.PlanRequest
	reply chan cohort.PlanDecision
	ctx   context.Context
}

// wakeMsg is a turn the session started itself (Prompts.Wake); done is
// closed once the UI has read it to its end.
type wakeMsg struct {
	run  iter.Seq2[cohort.Event, error]
	done chan struct{}
}

// Wake shows a turn the session started itself, as the lead's turns are
// shown: a message from another session reached the idle lead (pass it as
// the session's Config.Wake). It returns once the UI has read the turn to
// its end, or when the UI is gone (then a turn it had not begun is not
// started: the message waits).
func (p *Prompts) Wake(run iter.Seq2[cohort.Event, error]) {
	done := make(chan struct{})
	p.deliver(wakeMsg{run: run, done: done})
	select {
	case <-done:
	case <-p.done:
	}
}

// withdrawMsg removes a prompt whose asker stopped waiting.
type withdrawMsg struct{ ctx context.Context }

func (p *Prompts) attach(send func(tea.Msg)) {
	p.mu.Lock()
	p.send = send
	early := p.early
	p.early = nil
	p.mu.Unlock()
	if len(early) == 0 {
		return
	}
	// attach runs before the program's loop (NewProgram), where a send
	// would wait for it: hand the early prompts over in order once it runs.
	go func() {
		for _, m := range early {
			send(m)
		}
	}()
}

func (p *Prompts) deliver(m tea.Msg) {
	p.mu.Lock()
	send := p.send
	if send == nil {
		p.early = append(p.early, m)
	}
	p.mu.Unlock()
	if send != nil {
		go send(m) // never block an agent on the UI's loop
	}
}

// close ends every wait: the UI is gone.
func (p *Prompts) close() { p.once.Do(func() { close(p.done) }) }

// CanUseTool asks the user about one tool call.
func (p *Prompts) CanUseTool(ctx context.Context, req cohort.PermissionRequest) (cohort.Decision, error) {
	reply := make(chan cohort.Decision, 1)
	p.deliver(permissionMsg{req: req, view: prepare(req), reply: reply, ctx: ctx})
	select {
	case d := <-reply:
		return d, nil
	case <-ctx.Done():
		p.deliver(withdrawMsg{ctx})
		return cohort.Decision{}, ctx.Err()
	case <-p.done:
		return cohort.Decision{}, errUIGone
	}
}

// AskUser asks the user the lead's questions.
func (p *Prompts) AskUser(ctx context.Context, req cohort.AskRequest) (map[string]string, error) {
	reply := make(chan map[string]string, 1)
	p.deliver(askMsg{req: req, reply: reply, ctx: ctx})
	select {
	case a := <-reply:
		return a, nil
	case <-ctx.Done():
		p.deliver(withdrawMsg{ctx})
		return nil, ctx.Err()
	case <-p.done:
		return nil, errUIGone
	}
}

// ApprovePlan asks the user about a teammate's plan.
func (p *Prompts) ApprovePlan(ctx context.Context, req cohort.PlanRequest) (cohort.PlanDecision, error) {
	reply := make(chan cohort.PlanDecision, 1)
	p.deliver(planMsg{req: req, reply: reply, ctx: ctx})
	select {
	case d := <-reply:
		return d, nil
	case <-ctx.Done():
		p.deliver(withdrawMsg{ctx})
		return cohort.PlanDecision{}, ctx.Err()
	case <-p.done:
		return cohort.PlanDecision{}, errUIGone
	}
}
