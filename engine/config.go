package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// Config describes one agent. The zero values of the optional fields are
// usable defaults.
type Config struct {
	Model     llm.Model
	ModelName string
	// System is the rendered system prompt; it is sent unchanged every turn.
	System []llm.Block
	// Tools is the agent's pool, in the order the model sees it.
	Tools []tool.Tool
	// Withheld names tools of Tools this agent may not call (a fork keeps
	// its parent's array byte for byte, the shared cache prefix, but not
	// its parent's right to start agents), each with the reason the model
	// reads when it calls one anyway.
	Withheld map[string]string
	// Lacking says, for tools of the session that are not in Tools, why
	// this agent does not have them; the model reads it when it calls one.
	Lacking   map[string]string
	MaxTokens int // default 32000
	Thinking  *llm.Thinking
	Effort    string

	// MaxTurns bounds the model calls of one Send (0: no limit).
	MaxTurns int
	// Budget is the agent's account: every request's estimated spend is
	// checked against its caps and those above it before it is sent
	// (budget.go). Nil: no caps.
	Budget *budget.Account
	Prices llm.PriceTable // default llm.DefaultPrices

	// Env is the tool context; the engine fills ToolUseID per call.
	Env tool.Env

	Gate     Gate
	Hooks    Hooks
	Inbox    Inbox
	Recorder Recorder
	Sink     Sink

	// ParentToolUseID is set on every event of a spawned agent.
	ParentToolUseID string
	// MaxParallelTools bounds concurrent read-only calls (default 10).
	MaxParallelTools int
	// Background marks requests of background agents (no 529 retries).
	Background bool
	Compaction Compaction
	// Reopen, when set, is what a compacted conversation opens with:
	// before goes ahead of the summary (the agent's opening — its memory —
	// which the summary replaced), after behind it (what SessionStart
	// hooks with source "compact" add). It runs after PostCompact.
	Reopen func(ctx context.Context, trigger string) (before, after []llm.Block)

	// History seeds the conversation (resume, fork).
	History []llm.Message
	// CacheMarkers, when set, places the breakpoints instead of the
	// default policy (forks use it).
	CacheMarkers func(req *llm.Request)

	Now func() time.Time
}

// Compaction configures automatic history compaction.
type Compaction struct {
	Disabled bool
	// ContextWindow is the model's window in tokens (default 200,000).
	ContextWindow int64
	// Threshold is the fraction of the window that triggers compaction
	// (default 0.8).
	Threshold float64
	// KeepRecent is how many recent messages are kept verbatim (default 6).
	KeepRecent int
	// MaxSummaryTokens bounds the summary response (default 8,192).
	MaxSummaryTokens int
}

// Gate decides whether a tool call may run. It resolves "ask" itself
// (through a prompter, the lead, or policy) and returns the final verdict.
// Check is called from several goroutines at once (an agent's parallel
// read-only calls, and every agent that shares the gate), so it must be safe
// for concurrent use; it may block (a prompt) until ctx ends.
type Gate interface {
	Check(ctx context.Context, c *Call) Verdict
}

// Call is one tool call as the gate and hooks see it.
type Call struct {
	ID     string
	Name   string
	Input  json.RawMessage
	Traits tool.Traits
	Env    *tool.Env
	// Tool is the tool being called (for its optional interfaces, such as
	// tool.PromptDescriber).
	Tool tool.Tool
	// HookApproved is set when a PreToolUse hook allowed the call: the gate
	// skips prompting but still applies deny and ask rules.
	HookApproved bool
	// Duration is how long the tool ran; it is set before PostToolUse.
	Duration time.Duration
}

// Verdict is a gate's decision. A denial's Reason is shown to the model.
// Input, when set, replaces the call's input (a prompter may edit it).
// Confinement is what the reason for an allow lets the call's programs do
// (tool.Env.Confinement); a gate that leaves it zero confines them to
// reading. Approved marks an allow that a person, a hook or an allow rule
// gave this call, not the mode; the call's tool.Env.Approved carries it to
// the tool.
type Verdict struct {
	Allow       bool
	Approved    bool
	Reason      string
	Input       json.RawMessage
	Confinement tool.Confinement
}

// Hooks run user-configured commands around tool calls. Each method may
// block or rewrite; a nil Hooks runs nothing. Like Gate, the methods are
// called from several goroutines at once and must be safe for concurrent
// use. The engine uses only these two; the events of an agent's life
// (SubagentStart, Stop, TeammateIdle, WorktreeCreate, …) are optional
// interfaces listed in package hook (hook.SubagentHooks and the rest),
// which the layers above the engine look for on the same value.
type Hooks interface {
	// PreToolUse may deny a call (Allow false with a reason) or replace its
	// input; a zero HookVerdict means no opinion.
	PreToolUse(ctx context.Context, c *Call) HookVerdict
	// PostToolUse sees the result; returned text, if any, is appended to it.
	PostToolUse(ctx context.Context, c *Call, r *tool.Result) string
}

// HookVerdict is a hook's opinion on a call.
type HookVerdict struct {
	Deny bool
	// Allow pre-approves the call: no prompt, but deny and ask rules still
	// apply (the gate sees Call.HookApproved).
	Allow  bool
	Reason string
	Input  json.RawMessage
}

// Inbox supplies content to inject at tool-result boundaries and turn ends:
// teammate messages, task notifications, queued user prompts. Drain must be
// safe for concurrent use and never block.
type Inbox interface {
	Drain() []llm.Block
}

// Part is user-role content with where it came from (session.Origin*,
// empty for the user) and, for a teammate's message, who sent it: each
// part is its own transcript entry, so a teammate's words are never
// recorded as the user's or the system's.
type Part struct {
	Content []llm.Block
	Origin  string
	From    string
	// Recorded, when set, runs once the part's transcript entry has been
	// written (at once without a recorder): an inbox uses it to release
	// what it must hold until the part is durable.
	Recorded func()
}

// PartsInbox is an Inbox that says where each piece of content came from;
// the engine prefers DrainParts when the Inbox has it. A plain Inbox's
// content is recorded with origin system.
type PartsInbox interface {
	Inbox
	DrainParts() []Part
}

// Recorder persists the conversation (the session transcript). Append is
// called from the agent's goroutine only.
type Recorder interface {
	Append(e transcript.Entry) error
}

func (c *Config) defaults() {
	if c.MaxTokens == 0 {
		c.MaxTokens = 32000
	}
	if c.Prices == nil {
		c.Prices = llm.DefaultPrices
	}
	if c.MaxParallelTools <= 0 {
		c.MaxParallelTools = 10
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Env.Files == nil {
		c.Env.Files = tool.NewFileCache()
	}
	cp := &c.Compaction
	if cp.ContextWindow == 0 {
		cp.ContextWindow = 200_000
	}
	if cp.Threshold == 0 {
		cp.Threshold = 0.8
	}
	if cp.KeepRecent == 0 {
		cp.KeepRecent = 6
	}
	if cp.MaxSummaryTokens == 0 {
		cp.MaxSummaryTokens = 8192
	}
}
