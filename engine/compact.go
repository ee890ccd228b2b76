package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/transcript"
)

// summaryInstruction asks the model for the summary that replaces older turns.
const summaryInstruction = `The conversation is about to be compacted: everything before this point will be replaced by your summary, so write the summary now instead of continuing the task. Do not call tools.

Write it for yourself, as the notes you need to carry on without the earlier messages:
1. The user's requests and intent, in their own words where it matters.
2. Decisions made and why, constraints discovered, approaches rejected.
3. Files and code touched or read that still matter, with paths and the key details.
4. Errors met and how they were resolved.
5. The current state of the work and the precise next step.

Be complete about facts and brief in wording.`

// summaryPreamble opens the user message that carries the summary.
const summaryPreamble = "This conversation continues an earlier one that was compacted to save context. A summary of the earlier part follows; the most recent messages come after it verbatim.\n\n<summary>\n"

// Compaction triggers, as hooks see them.
const (
	CompactAuto   = "auto"   // the history nears the context window
	CompactManual = "manual" // the user asked (Agent.Compact)
)

// CompactHooks is an optional capability of Config.Hooks (hook.Scope has
// it): PreCompact runs before the history is compacted. For an automatic
// compaction, skip true leaves it undone (the engine then only cuts what
// would not fit, fit.go); a manual one goes ahead regardless.
type CompactHooks interface {
	PreCompact(ctx context.Context, trigger string) (skip bool)
}

// PostCompactHooks is an optional capability of Config.Hooks (hook.Scope
// has it): PostCompact runs after the history was compacted, with the
// trigger and the summary that replaced the older turns.
type PostCompactHooks interface {
	PostCompact(ctx context.Context, trigger, summary string)
}

// needsCompaction reports whether the next request, as estimated before it
// is sent (estimate.go), would use enough of the context window to compact
// first.
func (a *Conversation) needsCompaction(estimate int64) bool {
	c := a.cfg.Compaction
	if c.Disabled {
		return false
	}
	a.mu.Lock()
	n := len(a.history)
	a.mu.Unlock()
	return n > c.KeepRecent+1 && float64(estimate) >= c.Threshold*float64(c.ContextWindow)
}

// maybeCompact compacts when the next request calls for it, then cuts what
// is still too large (fit.go).
func (a *Conversation) maybeCompact(ctx context.Context) error {
	if a.takeCompactRequest() {
		a.preCompact(ctx, CompactManual)
		if err := a.compact(ctx, CompactManual); err != nil {
			return err
		}
	}
	if a.cfg.Compaction.Disabled {
		return nil
	}
	estimate := a.nextRequestTokens()
	if a.needsCompaction(estimate) && !a.preCompact(ctx, CompactAuto) {
		if err := a.compact(ctx, CompactAuto); err != nil {
			return err
		}
		estimate = a.nextRequestTokens()
	}
	return a.fitHistory(estimate)
}

// preCompact runs the PreCompact hooks, if any, and reports whether they
// asked to skip.
func (a *Conversation) preCompact(ctx context.Context, trigger string) bool {
	h, ok := a.cfg.Hooks.(CompactHooks)
	return ok && h.PreCompact(ctx, trigger)
}

// Compact replaces older turns with a model-written summary, keeping the
// most recent messages verbatim, and records the boundary in the transcript.
// It runs the PreCompact hooks with trigger "manual" first.
func (a *Conversation) Compact(ctx context.Context) error {
	a.preCompact(ctx, CompactManual)
	return a.compact(ctx, CompactManual)
}

// RequestCompact asks for a manual compaction before the agent's next
// model request: how a session compacts an agent whose Send is running
// (Compact must not be called then).
func (a *Conversation) RequestCompact() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.compactAsked = true
}

func (a *Conversation) takeCompactRequest() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	asked := a.compactAsked
	a.compactAsked = false
	return asked
}

func (a *Conversation) compact(ctx context.Context, trigger string) error {
	a.mu.Lock()
	tokens := a.lastSeen
	history := slices.Clone(a.history)
	a.mu.Unlock()
	cut := compactionCut(history, a.cfg.Compaction.KeepRecent)
	if cut <= 0 {
		return nil
	}
	summary, err := a.summarize(ctx, history)
	if err != nil {
		return err
	}
	// PostCompact, then what reopens the conversation (Claude Code's
	// order: SessionStart "compact" after PostCompact).
	if h, ok := a.cfg.Hooks.(PostCompactHooks); ok {
		h.PostCompact(ctx, trigger, summary)
	}
	var before, after []llm.Block
	if a.cfg.Reopen != nil {
		before, after = a.cfg.Reopen(ctx, trigger)
	}
	content := append(slices.Clone(before), llm.Text(summaryPreamble+summary+"\n</summary>"))
	head := llm.Message{Role: llm.RoleUser, Content: append(content, after...)}
	kept := history[cut:]
	next := append([]llm.Message{head}, kept...)

	a.mu.Lock()
	// Messages appended while summarising stay after the kept ones.
	next = append(next, a.history[len(history):]...)
	a.history = next
	a.lastSeen, a.lastUsage = 0, llm.Usage{}
	a.mu.Unlock()

	a.emit(Event{Kind: EventCompact, Compact: &CompactInfo{Trigger: trigger, TokensBefore: tokens, Summary: summary, Kept: len(kept)}})
	return a.recordRewrite(fmt.Sprintf("compacted %d messages (%d tokens) into a summary; kept %d", cut, tokens, len(kept)),
		append([]llm.Message{head}, kept...), transcript.OriginCompactSummary)
}

// compactionCut returns the index of the first kept message: an assistant
// message about keep messages from the end, so that the summary (a user
// message) can precede it. Zero means there is nothing worth compacting.
func compactionCut(history []llm.Message, keep int) int {
	cut := len(history) - keep
	for cut > 0 && history[cut].Role != llm.RoleAssistant {
		cut--
	}
	if cut < 2 {
		return 0
	}
	return cut
}

// summarize asks the model for a summary of history. The request shares the
// agent's system prompt, tools and history so it reads the prompt cache.
func (a *Conversation) summarize(ctx context.Context, history []llm.Message) (string, error) {
	// A history too large to send is cut for this request only (fit.go).
	c := a.cfg.Compaction
	history, _ = fitMessages(history, a.fitBudget()-int64(c.MaxSummaryTokens)-a.fixedTokens())
	req := a.requestFor(slices.Clone(history))
	n := len(req.Messages)
	switch {
	case n == 0:
		return "", errors.New("engine: compaction needs a conversation")
	case req.Messages[n-1].Role == llm.RoleUser:
		last := req.Messages[n-1]
		last.Content = append(slices.Clone(last.Content), llm.Text(summaryInstruction))
		req.Messages[n-1] = last
	default:
		// Between turns (a manual compaction) the history ends with the
		// model's answer: the instruction is a user message of its own.
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(summaryInstruction)}})
	}
	PlaceCacheMarkers(req)
	req.MaxTokens = a.cfg.Compaction.MaxSummaryTokens
	req.Thinking = nil
	hold, err := a.reserve(ctx, req.Model, a.fixedTokens()+messagesTokens(req.Messages))
	if err != nil {
		return "", err // a cap reached is the Send's stop, not a failure
	}
	resp, err := a.stream(ctx, req, nil) // a summary starts no tool
	if serr := a.settle(hold, resp); err == nil && serr != nil {
		return "", serr
	}
	if err != nil {
		return "", fmt.Errorf("engine: compaction: %w", err)
	}
	cost := a.price(resp)
	a.mu.Lock()
	a.usage = a.usage.Add(resp.Usage)
	a.cost += cost
	a.responses++
	a.mu.Unlock()
	text := llm.JoinText(resp.Content)
	if text == "" {
		return "", errors.New("engine: compaction: the model returned no summary text")
	}
	return text, nil
}
