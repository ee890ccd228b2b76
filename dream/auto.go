package dream

import (
	"context"
	"errors"
	"sync"

	"github.com/cohort-dev/cohort/task"
)

// AutoConfig wires automatic consolidations.
type AutoConfig struct {
	Scheduler *Scheduler
	// Start starts the consolidation of a won gate chain (Start with the
	// session's runtime); on error it must have rolled the lock back.
	Start func(ctx context.Context, t *Ticket) (*task.Task, error)
	// Logf hears why a check did not start a dream (nil: nobody).
	Logf func(format string, args ...any)
}

// Auto runs the gate chain after each lead turn, fire-and-forget: Poke
// never blocks, and at most one check runs at a time (a Poke during one is
// dropped; the gates would say the same). A dream it starts is a task of
// the session's registry, which stops it at Close like any other. Safe for
// concurrent use.
type Auto struct {
	cfg    AutoConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	busy   bool
	closed bool
}

// NewAuto returns the automatic consolidations of cfg.
func NewAuto(cfg AutoConfig) *Auto {
	ctx, cancel := context.WithCancel(context.Background())
	return &Auto{cfg: cfg, ctx: ctx, cancel: cancel}
}

// Poke runs the gate chain in the background and, when every gate passes,
// starts a consolidation. It returns at once.
func (a *Auto) Poke() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || a.busy {
		return
	}
	a.busy = true
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() {
			a.mu.Lock()
			a.busy = false
			a.mu.Unlock()
		}()
		a.check()
	}()
}

func (a *Auto) check() {
	t, err := a.cfg.Scheduler.Try(a.ctx)
	if err != nil {
		var b *Blocked
		if a.cfg.Logf != nil && (!errors.As(err, &b) || b.Gate != GateDisabled) {
			a.cfg.Logf("%v", err)
		}
		return
	}
	if _, err := a.cfg.Start(a.ctx, t); err != nil && a.cfg.Logf != nil {
		a.cfg.Logf("%v", err)
	}
}

// Close stops a check under way and waits for it; later Pokes do nothing.
// A consolidation already started is the registry's to stop.
func (a *Auto) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
}
