// Package holdgate holds messages that arrive from senders a person did
// not start until a person decides on each (hold, decide): the session
// socket's messages from other sessions today, messages from other
// machines (bridge:) later. It knows nothing of where messages come from
// or go: the caller says how to ask and what to do with an approved one.
//
// # Decisions the spec leaves open
//
//   - One question at a time, in arrival order: one worker asks about the
//     held messages in turn, so a person sees one question at a time and
//     approved messages are passed on in the order they came.
//   - A refusal, or a question that cannot be asked (the asker fails),
//     drops the message and reports it through Config.Dropped; nothing is
//     passed on unapproved.
//   - Close cancels the question being asked, drops what still waits and
//     returns once the worker has stopped.
package holdgate

import (
	"context"
	"sync"
)

// Config says how a Gate asks and what it does with the answer.
type Config[T any] struct {
	// Ask puts one held message to a person; true lets it through. An
	// error counts as a refusal. It must respect ctx, which Close cancels.
	Ask func(ctx context.Context, m T) (bool, string, error)
	// Pass hands an approved message on.
	Pass func(m T)
	// Dropped, if set, is told of every message that was not passed on,
	// with why.
	Dropped func(m T, why string)
}

// Gate holds messages for a decision.
type Gate[T any] struct {
	cfg     Config[T]
	mu      sync.Mutex
	queue   []T
	running bool
	closed  bool
	ctx     context.Context
	stop    context.CancelFunc
	done    sync.WaitGroup
}

// New returns an open gate.
func New[T any](cfg Config[T]) *Gate[T] {
	g := &Gate[T]{cfg: cfg}
	g.ctx, g.stop = context.WithCancel(context.Background())
	return g
}

// Hold queues m for a decision and starts the worker if none runs. After
// Close, m is dropped at once.
func (g *Gate[T]) Hold(m T) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.drop(m, "the session is closing")
		return
	}
	g.queue = append(g.queue, m)
	if !g.running {
		g.running = true
		g.done.Add(1)
		go g.work()
	}
}

// Close stops the gate: the question being asked is cancelled, what waits
// is dropped.
func (g *Gate[T]) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.stop()
	g.done.Wait()
}

// work decides each held message in turn until none waits.
func (g *Gate[T]) work() {
	defer g.done.Done()
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		m := g.queue[0]
		g.queue = g.queue[1:]
		g.mu.Unlock()
		g.decide(m)
	}
}

// decide asks about m and passes it on when approved.
func (g *Gate[T]) decide(m T) {
	if g.ctx.Err() != nil {
		g.drop(m, "the session is closing")
		return
	}
	ok, why, err := g.cfg.Ask(g.ctx, m)
	switch {
	case err != nil:
		g.drop(m, err.Error())
	case !ok:
		if why == "" {
			why = "refused"
		}
		g.drop(m, why)
	default:
		g.cfg.Pass(m)
	}
}

func (g *Gate[T]) drop(m T, why string) {
	if g.cfg.Dropped != nil {
		g.cfg.Dropped(m, why)
	}
}
