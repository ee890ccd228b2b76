package trace

import (
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
)

// engineEvent turns one engine event, stamped s, into spans and instants.
func (w *Writer) engineEvent(ev engine.Event, s int64) {
	t := w.agentTrack(ev.AgentID, ev.ParentToolUseID)
	s = w.begin(t, s)
	switch ev.Kind {
	case engine.EventRequest:
		if t.turn != nil {
			w.endTurn(t, s, true)
		}
		t.turn = &turn{n: ev.Turn, start: s, end: s}
		t.turn.req = &request{start: w.next(), firstToken: -1}
	case engine.EventStream:
		if ev.Stream != nil && (ev.Stream.Type == llm.EventDelta || ev.Stream.Type == llm.EventBlockStart) &&
			t.turn != nil && t.turn.req != nil && t.turn.req.firstToken < 0 {
			t.turn.req.firstToken = s
		}
	case engine.EventAssistant:
		w.assistant(t, ev, s)
	case engine.EventToolStart:
		w.toolStart(t, ev.Tool, s)
	case engine.EventToolDone:
		w.toolDone(t, ev.Tool, s)
	case engine.EventRetry:
		if t.turn != nil && t.turn.req != nil {
			t.turn.req.firstToken = -1 // the partial response is dropped
		}
		w.instant(t.tid, "retry", "retry", s, retryArgs(ev.Retry))
	case engine.EventCompact:
		w.instant(t.tid, "compact", "compact", s, compactArgs(ev.Compact))
	}
	t.last = w.last
}

// assistant ends the model request; the turn ends with it unless the
// response asked for tool calls.
func (w *Writer) assistant(t *track, ev engine.Event, s int64) {
	var uses int
	switch {
	case ev.Message != nil:
		uses = len(ev.Message.ToolUses())
	case ev.Response != nil:
		uses = len(ev.Response.Message().ToolUses())
	}
	if t.turn == nil || t.turn.req == nil {
		// A response without a request in progress (the request was cut
		// off, or the stream began before the writer): show that it came.
		args := responseArgs(ev.Response)
		args["turn"] = ev.Turn
		w.instant(t.tid, "model", "model response", s, args)
		return
	}
	args := responseArgs(ev.Response)
	if ev.Response != nil && w.cfg.Prices != nil {
		c := w.cfg.Prices.Cost(ev.Response.Model, ev.Response.Usage)
		args["cost_usd"] = c
		t.cost += c
		t.usage = t.usage.Add(ev.Response.Usage)
		t.priced = true
	}
	w.endRequest(t, s, args, false)
	t.turn.answered, t.turn.expect = true, uses
	if uses == 0 {
		w.endTurn(t, s, false)
	}
}

// toolStart opens a tool call's span on a free lane of its agent.
func (w *Writer) toolStart(t *track, te *engine.ToolEvent, s int64) {
	if te == nil {
		return
	}
	if old := t.tools[te.ID]; old != nil { // a repeated id: end the first
		w.endSpan(old, s, true)
		if old.turn != nil {
			old.turn.running--
		}
		s = w.next()
	}
	sp := &span{name: toolName(te.Name), cat: "tool", start: s, lane: w.takeLane(t), turn: t.turn,
		args: map[string]any{"tool": te.Name, "tool_use_id": te.ID, "input": summarizeJSON(te.Input)}}
	if t.turn != nil {
		t.turn.running++
	}
	t.tools[te.ID] = sp
	w.calls[te.ID] = t
}

// toolDone ends a tool call's span and, with the response's last call, its
// turn.
func (w *Writer) toolDone(t *track, te *engine.ToolEvent, s int64) {
	if te == nil {
		return
	}
	sp := t.tools[te.ID]
	args := doneArgs(te)
	if sp == nil {
		// The start was never seen: the duration still tells the story.
		args["tool"], args["tool_use_id"] = te.Name, te.ID
		w.instant(t.tid, "tool", "tool done", s, args)
		return
	}
	delete(t.tools, te.ID)
	delete(w.calls, te.ID)
	for k, v := range args {
		sp.args[k] = v
	}
	w.endSpan(sp, s, false)
	tn := sp.turn
	if tn == nil || tn != t.turn {
		return
	}
	tn.running--
	tn.done++
	tn.end = max(tn.end, s)
	if tn.answered && tn.running == 0 && tn.done >= tn.expect {
		w.endTurn(t, s, false)
	}
}

func toolName(name string) string {
	if name == "" {
		return "tool"
	}
	return fit(name, nameCap)
}

func responseArgs(r *llm.Response) map[string]any {
	args := map[string]any{}
	if r == nil {
		return args
	}
	if r.Model != "" {
		args["model"] = r.Model
	}
	if r.StopReason != "" {
		args["stop_reason"] = string(r.StopReason)
	}
	args["usage"] = r.Usage
	return args
}

func doneArgs(te *engine.ToolEvent) map[string]any {
	args := map[string]any{"duration_ms": millis(te.Duration.Nanoseconds())}
	if te.Result != nil {
		args["is_error"] = te.Result.IsError
		if te.Result.IsError {
			args["error"] = fit(te.Result.TextOf(), argCap)
		}
	}
	return args
}

func retryArgs(r *llm.RetryInfo) map[string]any {
	args := map[string]any{}
	if r == nil {
		return args
	}
	args["attempt"] = r.Attempt
	args["wait_ms"] = millis(r.Wait.Nanoseconds())
	if r.Err != nil {
		args["error"] = fit(r.Err.Error(), argCap)
	}
	return args
}

func compactArgs(c *engine.CompactInfo) map[string]any {
	if c == nil {
		return map[string]any{}
	}
	return map[string]any{"tokens_before": c.TokensBefore, "kept_messages": c.Kept}
}
