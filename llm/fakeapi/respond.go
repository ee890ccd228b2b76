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
	if err == nil {
		reply, err = normalize(reply, sum)
	}
	if err == nil && req.API == APIMessages {
		for i, b := range reply.Content {
			if b.Type == "tool_use" && textArgs(b.Input) {
				err = fmt.Errorf("content %d: tool_use %s has text arguments (BadArguments), which only the OpenAI protocols can carry", i, b.Name)
			}
		}
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
	if !wait(ctx, reply.FirstTokenDelay) {
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
	usage := pl.usage
	usage.OutputTokens = reply.OutputTokens
	msg := wireMessage{
		ID: fmt.Sprintf("msg_fake%020d", s.msgSeq.Add(1)), Type: "message", Role: "assistant", Model: req.Model,
		Content: []any{},
		Usage: wireUsage{
			InputTokens: usage.InputTokens, CacheCreationInputTokens: usage.CacheCreationInputTokens,
			CacheReadInputTokens: usage.CacheReadInputTokens,
			CacheCreation:        &wireCacheCreation{usage.CacheCreationInputTokens - pl.by1h, pl.by1h},
			OutputTokens:         1, ServiceTier: "standard",
		},
	}
	s.update(rec, func(rc *Recorded) { rc.MessageID, rc.Usage = msg.ID, usage })
	if !req.Stream {
		s.respondJSON(ctx, w, rec, msg, reply, pl)
		return
	}
	s.stream(ctx, w, rec, msg, reply, pl, rng)
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
	s.cache.commit(pl)
	for _, b := range reply.Content {
		msg.Content = append(msg.Content, fullBlock(b))
	}
	msg.StopReason = &reply.StopReason
	msg.Usage.OutputTokens = reply.OutputTokens
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	writeJSON(w, 200, msg)
}

// stream sends the reply as server-sent events, failing it part-way when the
// reply carries a StreamError or CutConnection fault.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, rec *Recorded, msg wireMessage, reply Reply, pl cachePlan, rng *rand.Rand) {
	h := w.Header()
	h.Set("content-type", "text/event-stream; charset=utf-8")
	h.Set("cache-control", "no-cache")
	w.WriteHeader(200)
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	sw := &sseWriter{w: w}

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
	for i, ev := range withPings(evs, rng) {
		if ctx.Err() != nil {
			s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while streaming" })
			return
		}
		if err := sw.write(ev); err != nil {
			s.update(rec, func(rc *Recorded) { rc.Error = "writing the stream: " + err.Error() })
			return
		}
		if i == 0 {
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
