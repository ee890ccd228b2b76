package hook

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/tool"
)

// Subject is the agent hooks fire for: its record (tool.Subject: id, type,
// cwd, permission mode, depth, the Subject call that spawned it) fills the
// common input fields, and it may bring hooks of its own. Commands run in
// its Cwd; a tool call's Env.Cwd, when set, takes its place for tool
// events. At Depth > 0 its own Stop hooks fire on SubagentStop instead.
type Subject struct {
	tool.Caller
	SessionID      string
	TranscriptPath string
	// Hooks are the agent definition's own hooks (FromDefinition). They run
	// after the runner's.
	Hooks *Set
	// Effort, when set, returns the agent's effort level ("" for none) at
	// the time an event fires.
	Effort func() string
}

// DefaultEffort is the effort level inputs report for an agent that sets
// none: the API's default.
const DefaultEffort = "high"

// Scope is a Runner bound to one agent. It implements engine.Hooks and has
// a method per event. Safe for concurrent use; a nil *Scope runs nothing.
type Scope struct {
	r   *Runner
	a   Subject
	set *Set
}

var _ engine.Hooks = (*Scope)(nil)

// For binds r to agent a. It is cheap: build a new Scope when the agent's
// permission mode or cwd changes.
func (r *Runner) For(a Subject) *Scope {
	own := a.Hooks
	if a.Depth > 0 {
		own = own.asSubagent()
	}
	return &Scope{r: r, a: a, set: Merge(r.cfg.Hooks, own)}
}

// Outcome is the combined answer of every command that ran for an event.
type Outcome struct {
	// Ran counts the commands that ran.
	Ran int
	// Decision is the strongest PreToolUse permission decision (deny > ask
	// > allow). An allow is dropped when any matching hook failed.
	Decision Decision
	// Block is set when a hook blocked: a denied tool call, a refused
	// prompt, a Stop that must not stop yet, a refused TeammateIdle,
	// TaskCompleted or WorktreeCreate. Reason says why (for the model; for
	// UserPromptSubmit, for the user).
	Block  bool
	Reason string
	// UpdatedInput replaces the tool input (PreToolUse, when not blocked).
	UpdatedInput json.RawMessage
	// Context is text for the model (additionalContext, PostToolUse
	// feedback, UserPromptSubmit's plain output), in configuration order.
	Context []string
	// Stop is set when a hook answered "continue": false: the agent should
	// stop after this event, showing StopReason to the user. It takes
	// precedence over Block (a Stop hook that blocks and says "continue":
	// false stops).
	Stop       bool
	StopReason string
	// Messages are for the user: systemMessage values and reports of
	// hooks that failed. Errors holds those failures (non-blocking).
	Messages []string
	Errors   []error
}

// Fire runs the commands configured for in.HookEventName that match
// (tool events on in.ToolName, SubagentStart/Stop on the agent type), all
// in parallel, and combines their answers. Common fields left empty in in
// are filled from the agent. It returns when every command has ended.
func (s *Scope) Fire(ctx context.Context, in Input) Outcome {
	if s == nil {
		return Outcome{}
	}
	s.fill(&in)
	ev := in.HookEventName
	cmds := s.set.matching(&in, s.r.cfg.Home)
	if len(cmds) == 0 {
		return Outcome{}
	}
	if err := ctx.Err(); err != nil {
		return failedAll(ev, fmt.Errorf("%s hooks not run: %w", ev, err), len(cmds))
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return failedAll(ev, fmt.Errorf("%s hooks not run: cannot encode their input: %w", ev, err), len(cmds))
	}
	runs := s.r.runAll(ctx, cmds, stdin, in.Cwd)
	vs := make([]verdict, len(runs))
	for i, x := range runs {
		vs[i] = interpret(ev, x)
	}
	s.r.observe(ev, &s.a, runs, vs)
	return combine(ev, vs)
}

func (s *Scope) fill(in *Input) {
	a := &s.a
	or := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	or(&in.SessionID, a.SessionID)
	or(&in.TranscriptPath, a.TranscriptPath)
	or(&in.Cwd, a.Cwd)
	or(&in.PermissionMode, string(a.Mode))
	or(&in.PermissionMode, "default")
	or(&in.AgentID, a.ID)
	or(&in.AgentType, a.Type)
	or(&in.ParentToolUseID, a.ParentToolUseID)
	or(&in.PromptID, s.r.promptID())
	if in.Depth == 0 {
		in.Depth = a.Depth
	}
	if in.Effort == nil && a.Effort != nil {
		in.Effort = &EffortLevel{Level: cmp.Or(a.Effort(), DefaultEffort)}
	}
}

// failedAll is the outcome when no command could be started. A tool call
// is then blocked: a check that did not happen must not let it through.
func failedAll(ev Event, err error, n int) Outcome {
	o := Outcome{Errors: []error{err}, Messages: []string{err.Error()}}
	if ev == PreToolUse {
		o.Block, o.Decision = true, Deny
		o.Reason = fmt.Sprintf("the PreToolUse hooks (%d) could not check this call: %v", n, err)
	}
	return o
}

// combine merges the verdicts of one event's commands (in configuration
// order): any block wins, the strongest decision wins, texts are joined.
func combine(ev Event, vs []verdict) Outcome {
	o := Outcome{Ran: len(vs)}
	var reasons, stops []string
	var input json.RawMessage
	conflict := false
	for _, v := range vs {
		if v.err != nil {
			o.Errors = append(o.Errors, v.err)
		}
		if v.message != "" {
			o.Messages = append(o.Messages, v.message)
		}
		if v.context != "" {
			o.Context = append(o.Context, v.context)
		}
		if v.stop {
			o.Stop = true
			if v.stopReason != "" {
				stops = append(stops, v.stopReason)
			}
		}
		if v.block {
			o.Block = true
			reasons = append(reasons, v.reason)
		}
		if v.decision.rank() > o.Decision.rank() {
			o.Decision = v.decision
		}
		if v.input != nil {
			if input == nil {
				input = v.input
			} else if !sameJSON(input, v.input) {
				conflict = true
			}
		}
	}
	if ev == PermissionRequest && !o.Block {
		// A hook that failed, or two that rewrote the input differently,
		// never leave an allow behind: the prompt goes ahead instead.
		if o.Decision == Allow && (len(o.Errors) > 0 || conflict) {
			o.Decision = NoDecision
		}
		if o.Decision == Allow {
			o.UpdatedInput = input
		}
	}
	if ev == PreToolUse {
		if conflict && !o.Block {
			o.Block, o.Decision = true, Deny
			reasons = append(reasons, "two PreToolUse hooks rewrote the input in different ways, so the call is blocked; make the hooks agree")
		}
		if o.Decision == Allow && len(o.Errors) > 0 {
			o.Decision = NoDecision // a hook that failed never leaves an allow behind
		}
		if !o.Block {
			o.UpdatedInput = input
		}
	}
	o.Reason = strings.Join(reasons, "\n")
	o.StopReason = strings.Join(stops, "\n")
	return o
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// PreToolUse implements engine.Hooks: a deny (exit 2, permissionDecision
// "deny", legacy "block", an unreadable answer, "continue": false) blocks
// the call with the hooks' reasons; an allow skips the permission gate;
// "ask" and no opinion leave the decision to the gate; updatedInput
// replaces the input.
func (s *Scope) PreToolUse(ctx context.Context, c *engine.Call) engine.HookVerdict {
	o := s.Fire(ctx, toolInput(PreToolUse, c))
	switch {
	case o.Block:
		return engine.HookVerdict{Deny: true, Reason: o.Reason}
	case o.Stop:
		reason := "a PreToolUse hook stopped the agent"
		if o.StopReason != "" {
			reason += ": " + o.StopReason
		}
		return engine.HookVerdict{Deny: true, Reason: reason}
	}
	return engine.HookVerdict{Allow: o.Decision == Allow, Input: o.UpdatedInput}
}

// PostToolUse implements engine.Hooks. A successful result fires
// PostToolUse with tool_response; an is_error result fires
// PostToolUseFailure with error (Claude Code's split). What the hooks say
// to the model (additionalContext, a "block" reason, exit-2 stderr) is
// returned for the engine to append to the result.
func (s *Scope) PostToolUse(ctx context.Context, c *engine.Call, r *tool.Result) string {
	if s == nil {
		return ""
	}
	in := toolInput(PostToolUse, c)
	ms := c.Duration.Milliseconds()
	in.DurationMs = &ms
	if r.IsError {
		interrupted := ctx.Err() != nil
		in.HookEventName, in.Error, in.IsInterrupt = PostToolUseFailure, r.TextOf(), &interrupted
	} else {
		in.ToolResponse = toolResponse(r)
	}
	return forModel(in.HookEventName, s.Fire(ctx, in))
}

var _ engine.BatchHooks = (*Scope)(nil)

// PostToolBatch implements engine.BatchHooks: it fires once every call of
// one model message has its result, with the calls and their results
// (tool_response as for PostToolUse). What the hooks say to the model
// (additionalContext, a "block" reason, exit-2 stderr) is returned for the
// engine to add after the results; it cannot undo the calls.
func (s *Scope) PostToolBatch(ctx context.Context, calls []engine.BatchCall) string {
	if s == nil {
		return ""
	}
	in := Input{HookEventName: PostToolBatch, ToolCalls: make([]BatchCall, len(calls))}
	for i, c := range calls {
		bc := BatchCall{ToolName: c.Name, ToolInput: c.Input, ToolUseID: c.ID}
		if len(bc.ToolInput) == 0 {
			bc.ToolInput = json.RawMessage("{}")
		}
		if c.Result != nil {
			bc.ToolResponse = toolResponse(c.Result)
		}
		in.ToolCalls[i] = bc
	}
	return forModel(PostToolBatch, s.Fire(ctx, in))
}

// forModel is what an event's hooks said to the model, one line per
// text, each marked with the event.
func forModel(ev Event, o Outcome) string {
	parts := o.Context
	if o.Stop {
		parts = append(parts, "A hook asked to stop here. "+o.StopReason)
	}
	for i, p := range parts {
		parts[i] = fmt.Sprintf("[%s hook] %s", ev, strings.TrimSpace(p))
	}
	return strings.Join(parts, "\n")
}

// toolResponse is a result as tool_response: the tool's structured
// Response when it has one, else the result's text as a JSON string.
func toolResponse(r *tool.Result) json.RawMessage {
	if r.Response != nil {
		if data, err := json.Marshal(r.Response); err == nil && len(data) > 0 && data[0] == '{' {
			return data
		}
	}
	return jsonString(r.TextOf())
}

// jsonString encodes s as a JSON string.
func jsonString(s string) json.RawMessage {
	data, _ := json.Marshal(s)
	return data
}

func toolInput(ev Event, c *engine.Call) Input {
	in := Input{HookEventName: ev, ToolName: c.Name, ToolInput: c.Input, ToolUseID: c.ID}
	if len(in.ToolInput) == 0 {
		in.ToolInput = json.RawMessage("{}")
	}
	if c.Env != nil {
		in.Cwd = c.Env.Cwd
	}
	return in
}
