package hook

import (
	"context"

	"github.com/cohort-dev/cohort/engine"
)

// The events of a session's life: its start and end, notifications for
// the user, and compaction. The session layer fires them (the engine fires
// PreCompact through engine.CompactHooks).

// Why a session starts, for SessionStart (and its matcher).
const (
	SourceStartup = "startup"
	SourceResume  = "resume"
	SourceClear   = "clear"
	SourceCompact = "compact"
	SourceFork    = "fork"
)

// Why a session ends, for SessionEnd (and its matcher).
const (
	EndClear           = "clear"
	EndLogout          = "logout"
	EndPromptInputExit = "prompt_input_exit"
	EndOther           = "other"
)

// Notice is a notification for the user, for Notification hooks. Type is
// Claude Code's notification_type (the matcher compares it):
// "permission_prompt" when a tool call waits for approval, "idle_prompt"
// when the agent has waited for input a while, and so on.
type Notice struct {
	Message string
	Title   string
	Type    string
}

// Notification types Cohort sends.
const (
	NoticePermission = "permission_prompt"
	NoticeIdle       = "idle_prompt"
)

var _ engine.CompactHooks = (*Scope)(nil)

// SessionStart fires when a session starts (source startup), resumes
// (resume), resumes under a new id (fork) or starts over (clear,
// compact), before its first prompt, with
// the lead's model. It cannot block; Context (additionalContext, or the
// plain stdout, as Claude Code reads it) is for the model's first turn.
func (s *Scope) SessionStart(ctx context.Context, source, model string) Outcome {
	return s.Fire(ctx, Input{HookEventName: SessionStart, Source: source, Model: model})
}

// SessionEnd fires when a session ends, with why (EndOther for a print-mode
// run that finished). It cannot block; what the hooks print is only
// reported.
func (s *Scope) SessionEnd(ctx context.Context, reason string) Outcome {
	return s.Fire(ctx, Input{HookEventName: SessionEnd, EndReason: reason})
}

// Notification fires when the user is told something (a call waits for
// approval, the agent waits for input). It cannot block.
func (s *Scope) Notification(ctx context.Context, n Notice) Outcome {
	return s.Fire(ctx, Input{HookEventName: Notification, Message: n.Message, Title: n.Title, NotificationType: n.Type})
}

// PreCompact implements engine.CompactHooks: it fires before the agent's
// history is compacted, with trigger "auto" (the context is nearly full)
// or "manual". A hook that blocks (exit 2, decision "block") or answers
// "continue": false skips an automatic compaction; a manual one goes ahead
// and the block is only reported.
func (s *Scope) PreCompact(ctx context.Context, trigger string) (skip bool) {
	none := ""
	o := s.Fire(ctx, Input{HookEventName: PreCompact, Trigger: trigger, CustomInstructions: &none})
	return trigger == engine.CompactAuto && (o.Block || o.Stop)
}

var _ engine.PostCompactHooks = (*Scope)(nil)

// PostCompact implements engine.PostCompactHooks: it fires after the
// agent's history was compacted, with the trigger (auto, manual) and the
// summary. It cannot block; what the hooks print is only reported.
func (s *Scope) PostCompact(ctx context.Context, trigger, summary string) {
	s.Fire(ctx, Input{HookEventName: PostCompact, Trigger: trigger, CompactSummary: summary})
}
