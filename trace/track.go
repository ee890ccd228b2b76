package trace

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/cohort-dev/cohort/llm"
)

// sortStride separates agents' thread_sort_index values, so an agent's tool
// lanes sort right after it and before the next agent.
const sortStride = 1_000_000

// track is one agent's timeline: its main thread (agent, turn and model
// request spans, instants) and the tool lanes beside it.
type track struct {
	tid     int
	order   int // 0 for the lead, then agents in start order
	name    string
	agentID string
	lanes   []*lane

	open      bool  // the agent span is open
	spanStart int64 // when it opened
	last      int64 // the agent's latest activity
	task      *taskRef
	turn      *turn
	tools     map[string]*span // open tool calls by tool_use_id
	// cost and usage sum the agent's priced requests (Config.Prices).
	cost   float64
	usage  llm.Usage
	priced bool
}

// lane is a thread beside an agent's main thread that holds its tool calls
// (and background shells), so calls that overlap never share a thread.
type lane struct {
	tid  int
	k    int
	busy bool
}

// span is a tool call or background task in progress on a lane.
type span struct {
	name  string
	cat   string
	start int64
	lane  *lane
	turn  *turn
	args  map[string]any
}

// turn is one model request and the tool calls that follow it.
type turn struct {
	n        int
	start    int64
	end      int64 // latest activity that belongs to the turn
	req      *request
	answered bool // the model responded
	expect   int  // tool calls the response asked for
	done     int  // tool calls finished
	running  int  // tool calls in progress
}

// request is a model request waiting for its response.
type request struct {
	start      int64
	firstToken int64 // -1 until the first stream event
}

// newTrack adds an agent's main thread, named and placed in the sort
// order (0 for the lead; others take w.takeOrder()).
func (w *Writer) newTrack(name string, order int) *track {
	w.nextTID++
	t := &track{tid: w.nextTID, order: order, name: name, tools: map[string]*span{}}
	w.tracks = append(w.tracks, t)
	w.nameThread(t.tid, t.name, t.order*sortStride)
	return t
}

// takeOrder returns the next place in the sort order after the lead.
func (w *Writer) takeOrder() int {
	w.nextOrder++
	return w.nextOrder
}

// leadTrack returns the lead's track, creating it on first use.
func (w *Writer) leadTrack() *track {
	if w.lead == nil {
		w.lead = w.newTrack("lead", 0)
	}
	return w.lead
}

// agentTrack returns the track of the agent an engine event came from,
// creating or binding one on the agent's first event. A subagent binds to
// what its task_started left (matched by the Agent call's tool_use_id); the
// first agent without a parent call is the lead.
func (w *Writer) agentTrack(agentID, parentCall string) *track {
	t := w.byAgent[agentID]
	if t == nil {
		switch {
		case parentCall != "":
			if c := w.byCall[parentCall]; c != nil && c.agentID == "" {
				t = c
			}
		case w.lead == nil || w.lead.agentID == "":
			t = w.leadTrack()
		}
		if t == nil {
			name, order := fit("agent "+agentID, nameCap), 0
			if p := w.pending[parentCall]; p != nil {
				name, order = p.name, p.order
			} else {
				order = w.takeOrder()
			}
			t = w.newTrack(name, order)
		}
		t.agentID = agentID
		w.byAgent[agentID] = t
	}
	if parentCall != "" {
		if p := w.pending[parentCall]; p != nil {
			w.attach(t, p)
		}
		if w.byCall[parentCall] == nil {
			w.byCall[parentCall] = t
		}
	}
	return t
}

// rename gives a track (and its lanes) a better name.
func (w *Writer) rename(t *track, name string) {
	if name == "" || name == t.name {
		return
	}
	t.name = name
	w.nameThread(t.tid, name, t.order*sortStride)
	for _, l := range t.lanes {
		w.nameThread(l.tid, laneName(name, l.k), t.order*sortStride+l.k)
	}
}

func (w *Writer) nameThread(tid int, name string, sort int) {
	w.meta(tid, "thread_name", map[string]any{"name": name})
	w.meta(tid, "thread_sort_index", map[string]any{"sort_index": sort})
}

func laneName(agent string, k int) string { return agent + " · tools " + strconv.Itoa(k) }

// takeLane returns a free lane of t, adding one when all are busy.
func (w *Writer) takeLane(t *track) *lane {
	for _, l := range t.lanes {
		if !l.busy {
			l.busy = true
			return l
		}
	}
	w.nextTID++
	l := &lane{tid: w.nextTID, k: len(t.lanes) + 1, busy: true}
	t.lanes = append(t.lanes, l)
	w.nameThread(l.tid, laneName(t.name, l.k), t.order*sortStride+l.k)
	return l
}

// begin opens t's agent span at ts if it is closed and returns the stamp
// for what happens next, so nothing else on the thread starts with it.
func (w *Writer) begin(t *track, ts int64) int64 {
	if t.open {
		return ts
	}
	t.open, t.spanStart = true, ts
	return w.next()
}

// endSpan writes a lane span that ended at ts and frees its lane.
func (w *Writer) endSpan(s *span, ts int64, unfinished bool) {
	if unfinished {
		s.args["unfinished"] = true
	}
	w.complete(s.lane.tid, s.cat, s.name, s.start, ts, s.args)
	s.lane.busy = false
}

// endRequest writes the open model request of t's turn.
func (w *Writer) endRequest(t *track, ts int64, args map[string]any, unfinished bool) {
	tn := t.turn
	if args == nil {
		args = map[string]any{}
	}
	args["turn"] = tn.n
	if tn.req.firstToken >= 0 {
		args["first_token_ms"] = millis(tn.req.firstToken - tn.req.start)
	}
	if unfinished {
		args["unfinished"] = true
	}
	w.complete(t.tid, "model", "model request", tn.req.start, ts, args)
	tn.req = nil
	tn.end = max(tn.end, ts)
}

// endTurn writes t's turn. A turn that is cut off (by a new request, the
// agent's end or Close) with its request or tool calls unfinished ends at
// ts and says so; a finished one ends at its last activity.
func (w *Writer) endTurn(t *track, ts int64, cut bool) {
	tn := t.turn
	unfinished := false
	if tn.req != nil {
		w.endRequest(t, ts, nil, true)
		unfinished = true
	}
	end := tn.end
	if cut && (unfinished || tn.running > 0 || !tn.answered) {
		end, unfinished = ts, true
	}
	args := map[string]any{"tool_calls": tn.expect}
	if unfinished {
		args["unfinished"] = true
	}
	w.complete(t.tid, "turn", "turn "+strconv.Itoa(tn.n), tn.start, end, args)
	t.turn = nil
}

// endAgent closes everything t has open at ts and writes its agent span.
// extra adds to the span's args (a task's status and usage).
func (w *Writer) endAgent(t *track, ts int64, extra map[string]any, unfinished bool) {
	if !t.open {
		return
	}
	for _, id := range byStart(t.tools) {
		w.endSpan(t.tools[id], ts, true)
		delete(t.tools, id)
		delete(w.calls, id)
		unfinished = true
	}
	if t.turn != nil {
		if t.turn.req != nil || t.turn.running > 0 {
			unfinished = true
		}
		w.endTurn(t, ts, true)
	}
	end := ts
	if !unfinished && t.task == nil {
		end = t.last // an idle agent with no task to end it ended with its last event
	}
	args := map[string]any{}
	if t.agentID != "" {
		args["agent_id"] = t.agentID
	}
	if t.task != nil {
		args["task_id"] = t.task.id
	}
	if t.priced {
		args["cost_usd"], args["usage"] = t.cost, t.usage
	}
	for k, v := range extra {
		args[k] = v
	}
	if unfinished {
		args["unfinished"] = true
	}
	w.complete(t.tid, "agent", t.name, t.spanStart, end, args)
	t.open = false
}

// closeAll ends every open span at ts, for Close.
func (w *Writer) closeAll(ts int64) {
	waiting := slices.SortedFunc(maps.Values(w.pending), func(a, b *pendingTask) int { return cmp.Compare(a.start, b.start) })
	for _, p := range waiting {
		w.attach(w.newTrack(p.name, p.order), p)
	}
	open := map[string]*span{}
	for id, ref := range w.tasks {
		if ref.span != nil {
			open[id] = ref.span
		}
	}
	for _, id := range byStart(open) {
		w.endSpan(open[id], ts, true)
	}
	for _, t := range w.tracks {
		w.endAgent(t, ts, nil, t.task != nil)
	}
}

// byStart returns the keys of spans in the order the spans started, so
// what Close writes does not depend on map order.
func byStart(spans map[string]*span) []string {
	keys := slices.Collect(maps.Keys(spans))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(spans[a].start, spans[b].start) })
	return keys
}

func millis(ns int64) float64 { return float64(ns/1000) / 1000 }
