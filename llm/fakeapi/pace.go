package fakeapi

import (
	"context"
	"net/http"
	"time"
)

// A model's pace. A real model answers after a first-token latency and then
// writes a few dozen to a hundred tokens a second, so a message of five
// Agent calls with 400-byte briefs streams for seconds, and a client that
// acts on each tool_use block as it completes gains that time. With
// Config.FirstTokenDelay and Config.OutputTokensPerSecond the fake streams
// that way: after the delay, each delta is released when its last byte is
// due — the reply's content bytes so far, at four bytes a token (the
// fake's only token estimate), divided by the rate — and everything
// written before a wait is flushed first, so a block's content_block_stop
// reaches the client as soon as its last delta does, not with the end of
// the message. The schedule depends only on the content and its seeded
// splitting: the same request and seed stream on the same schedule. A
// complete (non-streamed) response waits for the whole content's time.

// pacer releases a stream's events at the configured rate.
type pacer struct {
	ctx   context.Context
	now   func() time.Time
	sleep func(context.Context, time.Duration) bool
	flush func()
	// perByte is the time one content byte takes; 0 turns pacing off.
	perByte float64
	start   time.Time
	bytes   int
}

// pacer returns the pacer of one response written to w, its clock started
// now.
func (s *Server) pacer(ctx context.Context, w http.ResponseWriter) *pacer {
	p := &pacer{ctx: ctx, now: s.cfg.Now, sleep: s.cfg.Sleep}
	if tps := s.cfg.OutputTokensPerSecond; tps > 0 {
		p.perByte = float64(time.Second) / (4 * tps)
		p.start = p.now()
		rc := http.NewResponseController(w)
		p.flush = func() { rc.Flush() }
	}
	return p
}

// release accounts n more content bytes and waits until they are due,
// flushing what was written so far first. It reports false when the
// request's context ended.
func (p *pacer) release(n int) bool {
	if p.perByte == 0 || n == 0 {
		return p.ctx.Err() == nil
	}
	p.bytes += n
	due := p.start.Add(time.Duration(float64(p.bytes) * p.perByte))
	d := due.Sub(p.now())
	if d <= 0 {
		return p.ctx.Err() == nil
	}
	p.flush()
	return p.sleep(p.ctx, d)
}

// firstTokenDelay is how long reply waits before it begins.
func (s *Server) firstTokenDelay(reply Reply) time.Duration {
	if reply.FirstTokenDelay > 0 {
		return reply.FirstTokenDelay
	}
	return s.cfg.FirstTokenDelay
}

// outBytes is the content bytes one event carries: what a text, thinking
// or input_json delta adds to the message.
func (ev event) outBytes() int {
	d, ok := ev.payload.(evBlockDelta)
	if !ok {
		return 0
	}
	switch x := d.Delta.(type) {
	case wireText:
		return len(x.Text)
	case wireJSONDelta:
		return len(x.PartialJSON)
	case wireThinkingDelta:
		return len(x.Thinking)
	}
	return 0
}

// contentBytes is what a complete response holds: the bytes a paced stream
// of it would release.
func contentBytes(r Reply) int {
	n := 0
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			n += len(b.Text)
		case "thinking":
			n += len(b.Thinking)
		case "tool_use", "server_tool_use":
			n += len(b.Input)
		}
	}
	return n
}
