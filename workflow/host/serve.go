package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Spawner starts one subagent for an agent() call and waits for its final
// answer. Cohort implements it on the one spawn path every background
// agent takes. Spawn is called from many goroutines at once and must be
// safe for concurrent use; it returns when the agent has finished or ctx
// is done.
type Spawner interface {
	Spawn(ctx context.Context, req AgentRequest) (AgentResult, error)
}

// Engine is the script engine the host serves (package workflow). Run
// calls sp for each agent() and onEvent (from one goroutine) as it goes.
type Engine interface {
	Run(ctx context.Context, req RunRequest, sp Spawner, onEvent func(Event)) (Result, error)
	Check(req CheckRequest) (Checked, error)
	List(req ListRequest) ([]Saved, error)
}

// errCohortGone is the run's cause when stdin closes before it finishes.
var errCohortGone = errors.New("cohort closed the workflow host's input (it stopped the run or exited)")

// lingerAfterDone bounds how long Serve waits, after its "done", for Cohort
// to close its input.
const lingerAfterDone = 5 * time.Second

// Serve is the host's side: it reads one request from in, runs it on eng
// and writes the messages and the final "done" to out. A bad line from
// Cohort ends the request with a "done" naming the line, and Serve returns
// that error. Serve returns after the reading goroutine has ended (EOF on
// in), or lingerAfterDone after its answer if in stays open.
func Serve(ctx context.Context, in io.Reader, out io.Writer, eng Engine) error {
	rd := newReader(in, "cohort")
	w := &writer{w: out}
	first, err := rd.next()
	if errors.Is(err, io.EOF) {
		return errors.New("workflow host: no request on stdin")
	}
	if err != nil {
		_ = w.send(Message{Type: TypeDone, Error: err.Error()})
		return err
	}
	switch first.Type {
	case TypeCheck:
		c, err := eng.Check(*first.Check)
		return reply(w, Message{Type: TypeDone, Checked: &c}, err)
	case TypeList:
		s, err := eng.List(*first.List)
		return reply(w, Message{Type: TypeDone, Saved: s}, err)
	case TypeRun:
		return serveRun(ctx, rd, w, eng, *first.Run)
	}
	err = rd.errorf("the first message must be run, check or list, not %q", first.Type)
	_ = w.send(Message{Type: TypeDone, Error: err.Error()})
	return err
}

func reply(w *writer, m Message, err error) error {
	if err != nil {
		m = Message{Type: TypeDone, Error: err.Error()}
	}
	return w.send(m)
}

// calls routes answers to the agent() calls waiting for them.
type calls struct {
	mu      sync.Mutex
	next    atomic.Int64
	waiting map[int64]chan Message
}

// remoteSpawner sends agent() calls to Cohort and waits for the answers.
type remoteSpawner struct {
	w *writer
	c *calls
}

func (s remoteSpawner) Spawn(ctx context.Context, req AgentRequest) (AgentResult, error) {
	id := s.c.next.Add(1)
	ch := make(chan Message, 1)
	s.c.mu.Lock()
	s.c.waiting[id] = ch
	s.c.mu.Unlock()
	defer func() {
		s.c.mu.Lock()
		delete(s.c.waiting, id)
		s.c.mu.Unlock()
	}()
	if err := s.w.send(Message{Type: TypeAgent, ID: id, Agent: &req}); err != nil {
		return AgentResult{}, fmt.Errorf("send agent call %d: %w", id, err)
	}
	select {
	case m := <-ch:
		if m.Error != "" {
			return AgentResult{Cost: costOf(m.Answer)}, errors.New(m.Error)
		}
		return *m.Answer, nil
	case <-ctx.Done():
		return AgentResult{}, context.Cause(ctx)
	}
}

func costOf(a *AgentResult) float64 {
	if a == nil {
		return 0
	}
	return a.Cost
}

func serveRun(ctx context.Context, rd *reader, w *writer, eng Engine, req RunRequest) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := &calls{waiting: map[int64]chan Message{}}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			m, err := rd.next()
			if errors.Is(err, io.EOF) {
				cancel(errCohortGone)
				return
			}
			if err == nil && m.Type != TypeAnswer {
				err = rd.errorf("a %q message during a run (only answers are expected)", m.Type)
			}
			if err == nil {
				c.mu.Lock()
				ch, ok := c.waiting[m.ID]
				c.mu.Unlock()
				if !ok {
					err = rd.errorf("an answer to agent call %d, which is not waiting for one", m.ID)
				} else {
					select {
					case ch <- m:
						continue
					default:
						err = rd.errorf("a second answer to agent call %d", m.ID)
					}
				}
			}
			cancel(err)
			// Keep reading so Cohort never blocks writing, until EOF.
			_, _ = io.Copy(io.Discard, rd.br)
			return
		}
	}()
	res, runErr := eng.Run(ctx, req, remoteSpawner{w: w, c: c}, func(e Event) {
		_ = w.send(Message{Type: TypeEvent, Event: &e})
	})
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrProtocol) {
		runErr = cause
	}
	done := Message{Type: TypeDone, Result: &res}
	if runErr != nil {
		done.Error = runErr.Error()
	}
	sendErr := w.send(done)
	select {
	case <-readDone:
	case <-time.After(lingerAfterDone):
	}
	if errors.Is(cause, ErrProtocol) {
		return cause
	}
	return sendErr
}
