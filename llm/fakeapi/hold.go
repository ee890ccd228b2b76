package fakeapi

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Holds run paced streams without waiting and can hold one part-way: a
// test's way to see what a client does while a message is still
// streaming (say, that it starts a tool call as soon as the call's block
// is complete). Its clock stands still, so every pacing wait of a stream
// is as long as all the content released so far takes at the configured
// rate, and Sleep returns at once — except in a stream held with After,
// whose first wait past the given content bytes lasts until the test lets
// it go. The schedule is the pacer's (pace.go): what was written before a
// wait is flushed first, so the client has everything before the held
// byte.
type Holds struct {
	tps     float64
	perByte float64 // as the pacer computes it
	mu      sync.Mutex
	held    map[context.Context]*hold
	// timedOut counts holds that ended at HoldLimit instead.
	timedOut atomic.Int32
}

// HoldLimit bounds one hold: a test whose client never does what would
// let the stream go fails (Holds.TimedOut) instead of hanging.
const HoldLimit = 20 * time.Second

type hold struct {
	after   int
	until   <-chan struct{}
	reached chan struct{}
}

// NewHolds returns Holds for a server streaming at tokensPerSecond.
func NewHolds(tokensPerSecond float64) *Holds {
	return &Holds{tps: tokensPerSecond, perByte: float64(time.Second) / (4 * tokensPerSecond), held: map[context.Context]*hold{}}
}

// Configure sets cfg's pace to the Holds' rate and its clock and sleep to
// the Holds'.
func (h *Holds) Configure(cfg *Config) {
	cfg.OutputTokensPerSecond = h.tps
	frozen := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return frozen }
	cfg.Sleep = h.sleep
}

// After holds req's stream once its content passes bytes (text, thinking
// and tool input bytes, as the pacer counts them), until until is closed,
// req ends or HoldLimit passes. Call it from the policy that answers req.
// The returned channel is closed when the stream reaches the hold: from
// then until until is closed, the client has everything before it and
// nothing after.
func (h *Holds) After(req *Request, bytes int, until <-chan struct{}) (reached <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hd := &hold{after: bytes, until: until, reached: make(chan struct{})}
	h.held[req.Context()] = hd
	return hd.reached
}

// TimedOut reports how many holds ended at HoldLimit.
func (h *Holds) TimedOut() int { return int(h.timedOut.Load()) }

func (h *Holds) sleep(ctx context.Context, d time.Duration) bool {
	h.mu.Lock()
	hd := h.held[ctx]
	if hd != nil && d > time.Duration(float64(hd.after)*h.perByte) {
		delete(h.held, ctx)
	} else {
		hd = nil
	}
	h.mu.Unlock()
	if hd != nil {
		close(hd.reached)
		limit := time.NewTimer(HoldLimit)
		defer limit.Stop()
		select {
		case <-hd.until:
		case <-ctx.Done():
		case <-limit.C:
			h.timedOut.Add(1)
		}
	}
	return ctx.Err() == nil
}
