package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// Stop reasons of a Send, as Claude Code's result subtypes.
const (
	StopSuccess   = "success"
	StopMaxTurns  = "error_max_turns"
	StopBudget    = "error_max_budget_usd"
	StopExecution = "error_during_execution"
)

// Result summarises one Send.
type Result struct {
	// Text is the text of the final assistant message.
	Text string
	// Stop is one of the Stop* constants.
	Stop string
	// Turns counts model calls; ToolUses counts executed tool calls.
	Turns    int
	ToolUses int
	// Usage and CostUSD cover this Send only.
	Usage    llm.Usage
	CostUSD  float64
	Duration time.Duration
	// Capped is the cap a StopBudget stop reached.
	Capped *budget.Reached
}

// Add adds a later Send's result to r, so that r describes both: the later
// one's text and stop reason, the sums of turns, tool uses, usage, cost and
// duration. An agent's activation of several Sends (a hook that sends it
// back, notifications that wake it) reports one Result this way.
func (r *Result) Add(later *Result) {
	if later == nil {
		return
	}
	r.Text, r.Stop, r.Capped = later.Text, later.Stop, later.Capped
	r.Turns += later.Turns
	r.ToolUses += later.ToolUses
	r.Usage = r.Usage.Add(later.Usage)
	r.CostUSD += later.CostUSD
	r.Duration += later.Duration
}

// Conversation is one conversation with a model. Send must not be called
// concurrently; the other methods are safe for concurrent use.
type Conversation struct {
	cfg   Config
	tools map[string]tool.Tool
	defs  []llm.ToolDef

	mu       sync.Mutex
	model    string // the model requests name (SetModel changes it)
	history  []llm.Message
	lastReq  *llm.Request // the last request sent, for forks
	usage    llm.Usage    // lifetime
	cost     float64
	requests int   // model requests sent, for event numbering
	lastSeen int64 // total input+output tokens of the last response
	// lastUsage is the last response's usage while it describes the
	// history's prefix; responses counts responses (budget.go).
	lastUsage llm.Usage
	responses int
	// compactAsked is a manual compaction asked for during Send
	// (RequestCompact), done before the next request.
	compactAsked bool
	rewrites     int // how often the history was replaced (Mark)
}

// New returns an agent ready to Send.
func New(cfg Config) *Conversation {
	cfg.defaults()
	a := &Conversation{cfg: cfg, tools: make(map[string]tool.Tool, len(cfg.Tools))}
	for _, t := range cfg.Tools {
		d := t.Def()
		a.tools[d.Name] = t
		a.defs = append(a.defs, d)
	}
	a.history = llm.CloneMessages(cfg.History)
	a.model = cfg.ModelName
	return a
}

// SetModel makes later requests name model (a session's SetModel); the
// request under way, if any, keeps the one it was sent with. Usage is
// priced by the model each response names.
func (a *Conversation) SetModel(model string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.model = model
}

// Model returns the model later requests name.
func (a *Conversation) Model() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.model
}

// Effort returns the effort level requests carry ("" when none: the
// API's default).
func (a *Conversation) Effort() string { return a.cfg.Effort }

// Clear forgets the conversation: the next Send starts a new one with the
// same system prompt and tools. The transcript records a boundary, so a
// resumed session starts after it too. Must not be called during Send.
func (a *Conversation) Clear() error {
	a.mu.Lock()
	a.history, a.lastReq, a.lastSeen, a.lastUsage = nil, nil, 0, llm.Usage{}
	a.mu.Unlock()
	return a.recordRewrite("the conversation was cleared", nil, "")
}

// SetTools replaces the agent's tools from the next request on (a plan-mode
// pool that widens after approval). The tool array is part of the cached
// prefix, so this costs a cache miss; call it rarely.
func (a *Conversation) SetTools(tools []tool.Tool) {
	m := make(map[string]tool.Tool, len(tools))
	defs := make([]llm.ToolDef, 0, len(tools))
	for _, t := range tools {
		d := t.Def()
		m[d.Name] = t
		defs = append(defs, d)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tools, a.defs = m, defs
}

// SetSink replaces where events go from the next event on (a resumed agent
// reports to its new task). Must not be called during Send.
func (a *Conversation) SetSink(s Sink) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg.Sink = s
}

// SetRecorder replaces the transcript the agent appends to (a resumed agent
// reopens its transcript). Must not be called during Send.
func (a *Conversation) SetRecorder(r Recorder) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg.Recorder = r
}

// ID returns the agent's id.
func (a *Conversation) ID() string { return a.cfg.Env.Caller.ID }

// History returns a copy of the conversation so far.
func (a *Conversation) History() []llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return llm.CloneMessages(a.history)
}

// Usage returns the agent's lifetime usage and cost.
func (a *Conversation) Usage() (llm.Usage, float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.usage, a.cost
}

// LastRequest returns a copy of the last request sent (nil before the first).
// Forks build their request from it.
func (a *Conversation) LastRequest() *llm.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lastReq == nil {
		return nil
	}
	r := *a.lastReq
	r.Messages = llm.CloneMessages(r.Messages)
	return &r
}

// Send appends a user message holding content and runs the loop until the
// model ends its turn. origin labels the message in the transcript
// (session.Origin*; empty for the user). The returned error is non-nil only
// for infrastructure failures and cancellation; hitting a limit is a Result
// with a non-success Stop.
func (a *Conversation) Send(ctx context.Context, content []llm.Block, origin string) (*Result, error) {
	var parts []Part
	if len(content) > 0 {
		parts = []Part{{Content: content, Origin: origin}}
	}
	return a.SendParts(ctx, parts)
}

// SendParts is Send for input of several origins (a lead woken by a
// teammate's message and a task notification at once): the parts form one
// user message, and each is its own transcript entry with its origin.
func (a *Conversation) SendParts(ctx context.Context, parts []Part) (*Result, error) {
	start := a.cfg.Now()
	res := &Result{Stop: StopSuccess}
	defer func() { res.Duration = a.cfg.Now().Sub(start) }()
	if err := a.appendParts(parts); err != nil {
		return res, err
	}
	for {
		if a.cfg.MaxTurns > 0 && res.Turns >= a.cfg.MaxTurns {
			res.Stop = StopMaxTurns
			return res, nil
		}
		err := a.maybeCompact(ctx)
		var resp *llm.Response
		var cs *calls
		if err == nil {
			resp, cs, err = a.turn(ctx)
		}
		if r, ok := capped(err); ok {
			res.Stop, res.Capped = StopBudget, r
			return res, nil
		}
		if err != nil {
			return res, err
		}
		res.Turns++
		res.Usage = res.Usage.Add(resp.Usage)
		res.CostUSD += a.price(resp)
		res.Text = llm.JoinText(resp.Content)

		uses := resp.Message().ToolUses()
		if len(uses) == 0 {
			cs.close()
			if resp.StopReason == llm.StopPauseTurn {
				continue // send the conversation back as is
			}
			// The turn ended; content that arrived meanwhile starts another.
			injected := a.drainInbox()
			if len(injected) == 0 {
				return res, nil
			}
			if err := a.appendParts(injected); err != nil {
				return res, err
			}
			continue
		}
		results, runErr := cs.finish(uses)
		res.ToolUses += cs.ran()
		if cs.cut != nil {
			results = append(results, llm.Text(cutOffNote))
		} else if runErr == nil {
			results = a.postToolBatch(ctx, cs, results)
		}
		parts := append([]Part{{Content: results, Origin: transcript.OriginToolResult}}, a.drainInbox()...)
		if err := a.appendParts(parts); err != nil {
			return res, err
		}
		if runErr != nil {
			return res, runErr
		}
		if err := a.cutError(ctx, cs); err != nil {
			return res, err
		}
	}
}

// cutError is the error a response cut short ends the Send with: none
// when the provider was about to retry it (the loop continues from the
// kept blocks instead), else the failure.
func (a *Conversation) cutError(ctx context.Context, cs *calls) error {
	switch {
	case cs.cut == nil || cs.retried:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("engine: model request: %w", cs.cut)
}

// price is what resp cost: priced by the model it names (else the one
// requested).
func (a *Conversation) price(resp *llm.Response) float64 {
	model := resp.Model
	if model == "" {
		model = a.Model()
	}
	return a.cfg.Prices.Cost(model, resp.Usage)
}

func (a *Conversation) drainInbox() []Part {
	switch in := a.cfg.Inbox.(type) {
	case nil:
		return nil
	case PartsInbox:
		return in.DrainParts()
	default:
		if blocks := in.Drain(); len(blocks) > 0 {
			return []Part{{Content: blocks, Origin: transcript.OriginSystem}}
		}
		return nil
	}
}

// appendParts adds parts as user input, each recorded with its origin.
func (a *Conversation) appendParts(parts []Part) error {
	for _, p := range parts {
		if len(p.Content) == 0 {
			continue
		}
		if err := a.appendUserFrom(p.Content, p.Origin, p.From); err != nil {
			return err
		}
		if p.Recorded != nil {
			p.Recorded()
		}
	}
	return nil
}

// appendUserFrom adds a user message, merging into a trailing user message so
// that roles keep alternating.
func (a *Conversation) appendUserFrom(content []llm.Block, origin, from string) error {
	msg := llm.Message{Role: llm.RoleUser, Content: content}
	a.mu.Lock()
	if n := len(a.history); n > 0 && a.history[n-1].Role == llm.RoleUser {
		a.history[n-1].Content = append(a.history[n-1].Content, content...)
	} else {
		a.history = append(a.history, msg)
	}
	a.mu.Unlock()
	a.emit(Event{Kind: EventUser, Message: &msg, Origin: origin})
	return a.record(transcript.Entry{Type: transcript.TypeUser, Message: &msg, Origin: origin, From: from})
}

func (a *Conversation) record(e transcript.Entry) error {
	a.mu.Lock()
	rec := a.cfg.Recorder
	a.mu.Unlock()
	if rec == nil {
		return nil
	}
	if err := rec.Append(e); err != nil {
		return fmt.Errorf("engine: record transcript: %w", err)
	}
	return nil
}

func (a *Conversation) emit(ev Event) {
	a.mu.Lock()
	sink := a.cfg.Sink
	a.mu.Unlock()
	if sink == nil {
		return
	}
	ev.AgentID = a.cfg.Env.Caller.ID
	ev.ParentToolUseID = a.cfg.ParentToolUseID
	if ev.Time.IsZero() {
		ev.Time = a.cfg.Now()
	}
	sink(ev)
}

// turn sends one request and appends the assistant message it returns:
// the response, or the complete blocks of one cut short after a call
// started (cut.go). The calls it holds have been offered as their blocks
// completed; the caller finishes or closes them.
func (a *Conversation) turn(ctx context.Context) (*llm.Response, *calls, error) {
	hold, err := a.reserve(ctx, a.Model(), a.nextRequestTokens())
	if err != nil {
		return nil, nil, err
	}
	req := a.buildRequest()
	a.mu.Lock()
	a.lastReq = req
	a.requests++
	n := a.requests
	a.mu.Unlock()
	a.emit(Event{Kind: EventRequest, Turn: n})
	cs := a.newCalls(ctx)
	resp, err := a.stream(ctx, req, cs)
	if serr := a.settle(hold, resp); err == nil && serr != nil {
		err = serr
	}
	if err != nil {
		cs.abandon()
		return nil, nil, err
	}
	msg := resp.Message()
	cost := a.price(resp)
	a.mu.Lock()
	a.history = append(a.history, msg)
	a.usage = a.usage.Add(resp.Usage)
	a.cost += cost
	a.lastSeen = resp.Usage.TotalInput() + resp.Usage.OutputTokens
	a.lastUsage = resp.Usage
	a.responses++
	a.mu.Unlock()
	a.emit(Event{Kind: EventAssistant, Message: &msg, Response: resp, Turn: n})
	u := resp.Usage
	if err := a.record(transcript.Entry{Type: transcript.TypeAssistant, Message: &msg, Usage: &u,
		Model: resp.Model, RequestID: resp.RequestID}); err != nil {
		cs.abandon()
		return nil, nil, err
	}
	return resp, cs, nil
}

// stream runs one model call, forwarding stream events to the sink and
// offering each complete tool_use block to cs (nil: none are). Once a call
// has started, a failure ends the call with the kept blocks as the
// response and the failure in cs.cut, and a retry the provider is about to
// make is not made (cs.retried).
func (a *Conversation) stream(ctx context.Context, req *llm.Request, cs *calls) (*llm.Response, error) {
	var resp *llm.Response
	var got partial
	for ev, err := range a.cfg.Model.Stream(ctx, req) {
		if err != nil {
			if cs != nil && cs.started() {
				cs.cut = err
				return got.response(req.Model), nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("engine: model request: %w", err)
		}
		switch ev.Type {
		case llm.EventDone:
			resp = ev.Response
		case llm.EventRetry:
			if cs != nil && cs.started() {
				cs.cut, cs.retried = retryCause(ev.Retry), true
				return got.response(req.Model), nil
			}
			got = partial{}
			if cs != nil {
				cs.reset()
			}
			a.emit(Event{Kind: EventRetry, Retry: ev.Retry})
		default:
			got.add(&ev)
			if ev.Type == llm.EventBlockStop && cs != nil {
				switch {
				case ev.Block == nil:
					cs.blind()
				case ev.Block.Type == llm.BlockToolUse:
					cs.offer(*ev.Block)
				}
			}
			e := ev
			a.emit(Event{Kind: EventStream, Stream: &e})
		}
	}
	if resp == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New("engine: model stream ended without a response")
	}
	return resp, nil
}

// retryCause is the failure behind a retry the provider announced.
func retryCause(r *llm.RetryInfo) error {
	if r != nil && r.Err != nil {
		return r.Err
	}
	return errors.New("the response failed part-way")
}
