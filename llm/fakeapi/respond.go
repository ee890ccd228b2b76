package fakeapi

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// respond answers a valid /v1/messages request: it plans the cache, asks the
// policy, and sends an error, a JSON message or a stream.
func (s *Server) respond(ctx context.Context, w http.ResponseWriter, rec *Recorded, req *Request, sum [32]byte) {
	// Plan before the policy runs: a policy that blocks (a test barrier)
	// must not let another request's commit leak into this one's reads.
	pl := s.cache.plan(req)
	if in := pl.usage.total(); s.cfg.ContextWindow > 0 && in > s.cfg.ContextWindow {
		s.fail(w, rec, invalid("prompt is too long: %d tokens > %d maximum", in, s.cfg.ContextWindow), nil)
		return
	}
	reply, err := s.decide(req)
	if err == nil && reply.Await != nil {
		s.update(rec, func(rc *Recorded) { rc.Label = reply.Label })
		if req.API == APIMessages && req.Stream {
			s.streamAwaited(ctx, w, rec, req, reply, pl, sum)
			return
		}
		if reply = awaited(ctx, reply); ctx.Err() != nil {
			s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while awaiting the reply" })
			return
		}
	}
	if err == nil {
		reply, err = usable(reply, sum, req.API)
	}
	if err != nil {
		s.fail(w, rec, &apiError{status: 500, typ: "api_error", message: "fakeapi: the policy's reply is unusable: " + err.Error()}, nil)
		return
	}
	s.update(rec, func(rc *Recorded) { rc.Label = reply.Label })
	f := reply.Fault
	if f != nil && !f.Kind.midStream() {
		s.fail(w, rec, f.apiError(req.API), f)
		return
	}
	if !s.cfg.Sleep(ctx, s.firstTokenDelay(reply)) {
		s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled before the first token" })
		return
	}
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), binary.BigEndian.Uint64(sum[:8])))
	switch req.API {
	case APIChat:
		s.chat(ctx, w, rec, req, reply, pl, rng)
		return
	case APIResponses:
		s.responses(ctx, w, rec, req, reply, pl, rng)
		return
	}
	msg := s.message(req, pl)
	s.update(rec, func(rc *Recorded) { rc.MessageID, rc.Usage = msg.ID, withOutput(pl.usage, reply) })
	if !req.Stream {
		s.respondJSON(ctx, w, rec, msg, reply, pl)
		return
	}
	startStream(w)
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	s.sendMessage(ctx, w, rec, &sseWriter{w: w}, msg, reply, pl, rng, false)
}

// usable normalizes a policy's reply and checks that protocol api can
// carry it.
func usable(reply Reply, sum [32]byte, api API) (Reply, error) {
	reply, err := normalize(reply, sum)
	if err != nil || api != APIMessages {
		return reply, err
	}
	for i, b := range reply.Content {
		if b.Type == "tool_use" && textArgs(b.Input) {
			return reply, fmt.Errorf("content %d: tool_use %s has text arguments (BadArguments), which only the OpenAI protocols can carry", i, b.Name)
		}
	}
	return reply, nil
}

// awaited calls reply.Await, keeping the outer reply's label when the
// awaited one has none.
func awaited(ctx context.Context, reply Reply) Reply {
	out := reply.Await(ctx)
	if out.Label == "" {
		out.Label = reply.Label
	}
	out.Await = nil
	return out
}

// message is the message a stream starts with: its id, and usage with the
// input as the cache plan has it and one output token.
func (s *Server) message(req *Request, pl cachePlan) wireMessage {
	u := pl.usage
	return wireMessage{
		ID: fmt.Sprintf("msg_fake%020d", s.msgSeq.Add(1)), Type: "message", Role: "assistant", Model: req.Model,
		Content: []any{},
		Usage: wireUsage{
			InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens,
			CacheReadInputTokens: u.CacheReadInputTokens,
			CacheCreation:        &wireCacheCreation{u.CacheCreationInputTokens - pl.by1h, pl.by1h},
			OutputTokens:         1, ServiceTier: "standard",
		},
	}
}

// withOutput is the usage reported for reply.
func withOutput(u Usage, reply Reply) Usage {
	u.OutputTokens = reply.OutputTokens
	return u
}

// streamAwaited streams a reply decided by Reply.Await: message_start at
// once, pings until Await returns, then the content as any reply's. A
// reply that fails with an HTTP fault fails the begun stream with an error
// event of that type instead.
func (s *Server) streamAwaited(ctx context.Context, w http.ResponseWriter, rec *Recorded, req *Request, pending Reply, pl cachePlan, sum [32]byte) {
	msg := s.message(req, pl)
	s.update(rec, func(rc *Recorded) { rc.MessageID, rc.Usage = msg.ID, pl.usage })
	startStream(w)
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	sw := &sseWriter{w: w}
	if err := sw.write(event{"message_start", evMessageStart{"message_start", msg}}); err != nil {
		s.update(rec, func(rc *Recorded) { rc.Error = "writing the stream: " + err.Error() })
		return
	}
	s.cache.commit(pl) // the response has begun
	reply, ok := s.awaitPinging(ctx, w, sw, pending)
	if !ok {
		s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while awaiting the reply" })
		return
	}
	reply, err := usable(reply, sum, req.API)
	if err != nil {
		reply = Reply{Fault: &Fault{Kind: StreamError, Type: "api_error", Message: "fakeapi: the policy's reply is unusable: " + err.Error()}}
	}
	if f := reply.Fault; f != nil && !f.Kind.midStream() {
		_, typ := f.statusAndType()
		if typ == "" {
			typ = "api_error"
		}
		reply.Fault = &Fault{Kind: StreamError, Type: typ, Message: f.message()}
	}
	s.update(rec, func(rc *Recorded) { rc.Label, rc.Usage = reply.Label, withOutput(pl.usage, reply) })
	if !s.cfg.Sleep(ctx, s.firstTokenDelay(reply)) {
		s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled before the first token" })
		return
	}
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), binary.BigEndian.Uint64(sum[:8])))
	s.sendMessage(ctx, w, rec, sw, msg, reply, pl, rng, true)
}

// awaitPinging waits for pending.Await, sending a ping every AwaitPing. It
// reports false when ctx ended first; Await has returned either way.
func (s *Server) awaitPinging(ctx context.Context, w http.ResponseWriter, sw *sseWriter, pending Reply) (Reply, bool) {
	rc := http.NewResponseController(w)
	rc.Flush()
	done := make(chan Reply, 1)
	go func() { done <- awaited(ctx, pending) }() // Await returns when ctx ends
	t := time.NewTicker(s.cfg.AwaitPing)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r, ctx.Err() == nil
		case <-t.C:
			if sw.write(pingEvent) == nil {
				rc.Flush()
			}
		}
	}
}

// decide calls the policy, turning a panic into an error.
func (s *Server) decide(req *Request) (reply Reply, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("policy panicked: %v", p)
		}
	}()
	return s.policy(req), nil
}

// wait sleeps for d or until ctx ends, reporting whether d elapsed.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// respondJSON sends a complete message for a non-streaming request.
func (s *Server) respondJSON(ctx context.Context, w http.ResponseWriter, rec *Recorded, msg wireMessage, reply Reply, pl cachePlan) {
	if f := reply.Fault; f != nil {
		if f.Kind == Stall || f.Kind == KeepAlive {
			s.hang(ctx, rec, f)
			return
		}
		if f.Kind == CutConnection {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(200)
			w.Write([]byte(`{"id":"` + msg.ID + `","type":"message","content":[`))
			s.update(rec, func(rc *Recorded) { rc.Status, rc.Fault = 200, f.Kind })
			cut(w)
			return
		}
		s.fail(w, rec, f.apiError(APIMessages), f)
		return
	}
	if !s.pacer(ctx, w).release(contentBytes(reply)) {
		s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while the reply was generated" })
		return
	}
	s.cache.commit(pl)
	for _, b := range reply.Content {
		msg.Content = append(msg.Content, fullBlock(b))
	}
	msg.StopReason = &reply.StopReason
	msg.Usage.OutputTokens = reply.OutputTokens
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	writeJSON(w, 200, msg)
}

// sendMessage sends the reply as server-sent events, failing it part-way
// when the reply carries a StreamError or CutConnection fault. begun says
// message_start was sent already (the reply was awaited).
func (s *Server) sendMessage(ctx context.Context, w http.ResponseWriter, rec *Recorded, sw *sseWriter, msg wireMessage, reply Reply, pl cachePlan, rng *rand.Rand, begun bool) {
	var content []event
	for i, b := range reply.Content {
		content = append(content, blockEvents(i, b, rng)...)
	}
	evs := []event{{"message_start", evMessageStart{"message_start", msg}}}
	if reply.Fault != nil {
		// Fail after about half of the content: some of it has arrived.
		evs = append(evs, content[:(len(content)+1)/2]...)
	} else {
		u := msg.Usage
		evs = append(evs, content...)
		evs = append(evs,
			event{"message_delta", evMessageDelta{"message_delta", wireStop{StopReason: reply.StopReason},
				wireEndUsage{u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, reply.OutputTokens}}},
			event{"message_stop", evType{"message_stop"}})
	}
	evs = withPings(evs, rng)
	if begun {
		evs = evs[1:]
	}
	pace := s.pacer(ctx, w)
	for i, ev := range evs {
		if !pace.release(ev.outBytes()) {
			s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while streaming" })
			return
		}
		if err := sw.write(ev); err != nil {
			s.update(rec, func(rc *Recorded) { rc.Error = "writing the stream: " + err.Error() })
			return
		}
		if i == 0 && !begun {
			// The response has begun: its cache writes become readable.
			s.cache.commit(pl)
		}
	}
	if f := reply.Fault; f != nil {
		s.endFaulty(ctx, w, rec, f, func() {
			_, typ := f.statusAndType()
			sw.write(event{"error", wireErrorBody{Type: "error", Error: wireErrObj{typ, f.message()}}})
		})
	}
}

// cut drops the connection under w without finishing the response: the
// client sees the body end early (unexpected EOF), never a clean end.
func cut(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): abort the handler, which resets the stream.
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// hang answers a non-streaming request that has a Stall or KeepAlive fault:
// nothing, until the client goes away.
func (s *Server) hang(ctx context.Context, rec *Recorded, f *Fault) {
	s.update(rec, func(rc *Recorded) { rc.Fault = f.Kind })
	<-ctx.Done()
	s.update(rec, func(rc *Recorded) { rc.Error = "hung until the client went away" })
}

// failWhole fails a non-streaming OpenAI-protocol request with a fault
// meant for a stream: a cut connection or a hang as such, an error event as
// the error status.
func (s *Server) failWhole(ctx context.Context, w http.ResponseWriter, rec *Recorded, api API, f *Fault) {
	switch f.Kind {
	case CutConnection:
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(200)
		w.Write([]byte(`{"id":"`))
		s.update(rec, func(rc *Recorded) { rc.Status, rc.Fault = 200, f.Kind })
		cut(w)
	case Stall, KeepAlive:
		s.hang(ctx, rec, f)
	default:
		s.fail(w, rec, f.apiError(api), f)
	}
}
