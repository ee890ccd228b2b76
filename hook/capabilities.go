package hook

import (
	"context"

	"github.com/cohort-dev/cohort/permission"
)

// The optional capabilities of an engine.Hooks, in one place. The engine
// needs only PreToolUse and PostToolUse; the layers above it (the runtime,
// the team layer, the session) look for these interfaces on an agent's
// engine.Hooks value and fire their events when it has them. A custom
// engine.Hooks that implements none of them fires none of these events:
// implement the ones you need (or wrap a *Scope). *Scope implements all.
//
// Concurrency: an agent's hooks are called from several goroutines at once
// (parallel tool calls of one agent, its subagents, the team layer's
// readers), so implementations must be safe for concurrent use.

// SubagentHooks fire around a spawned agent's work: SubagentStart before
// its first turn (its context joins the agent's first message);
// SubagentStop when it ends a piece of work (a block sends it back with the
// reason; stopHookActive is true on the repeats).
type SubagentHooks interface {
	SubagentStart(ctx context.Context, prompt string) Outcome
	SubagentStop(ctx context.Context, st StopState) Outcome
}

// TurnHooks fire around the lead's turns: UserPromptSubmit before a user
// prompt reaches the model (a block refuses it), Stop when the lead is about
// to end its turn (a block keeps it going with the reason), StopFailure
// when a failed model request ended it, Interrupt when it is interrupted.
type TurnHooks interface {
	UserPromptSubmit(ctx context.Context, prompt string) Outcome
	Stop(ctx context.Context, st StopState) Outcome
	StopFailure(ctx context.Context, f Failure) Outcome
	Interrupt(ctx context.Context, source, reason, via string) Outcome
}

// TeammateHooks fire when a teammate is about to go idle; a block keeps it
// working with the reason.
type TeammateHooks interface {
	TeammateIdle(ctx context.Context, teammate, team string) Outcome
}

// TaskHooks fire when a shared task list entry was created (a block takes
// it back) or is about to be marked completed (a block keeps it open), with
// the reason.
type TaskHooks interface {
	TaskCreated(ctx context.Context, t Task) Outcome
	TaskCompleted(ctx context.Context, t Task) Outcome
}

// WorktreeHooks fire around an agent's worktree: WorktreeCreate may refuse
// the creation (Block); WorktreeRemove only informs.
type WorktreeHooks interface {
	WorktreeCreate(ctx context.Context, path, branch string) Outcome
	WorktreeRemove(ctx context.Context, path, branch string) Outcome
}

// CwdHooks fire when an agent moved to another working directory.
type CwdHooks interface {
	CwdChanged(ctx context.Context, oldCwd, newCwd string) Outcome
}

// PermissionHooks fire when a call is about to be put to whoever approves
// it: PermissionRequest may answer instead (Prompter wraps an agent's
// prompter with them), Notification tells a person a prompt is waiting.
type PermissionHooks interface {
	PermissionRequest(ctx context.Context, req permission.PromptRequest) Outcome
	Notification(ctx context.Context, n Notice) Outcome
}

// SessionHooks fire at the start and end of a session (the lead's scope).
type SessionHooks interface {
	SessionStart(ctx context.Context, source, model string) Outcome
	SessionEnd(ctx context.Context, reason string) Outcome
}

// PreCompact, PostCompact and PostToolBatch are engine capabilities rather
// than these: the engine itself compacts and runs the calls, so it looks
// for engine.CompactHooks, engine.PostCompactHooks and engine.BatchHooks
// (*Scope has them).

var (
	_ CwdHooks        = (*Scope)(nil)
	_ PermissionHooks = (*Scope)(nil)
	_ SessionHooks    = (*Scope)(nil)
	_ SubagentHooks   = (*Scope)(nil)
	_ TurnHooks       = (*Scope)(nil)
	_ TeammateHooks   = (*Scope)(nil)
	_ TaskHooks       = (*Scope)(nil)
	_ WorktreeHooks   = (*Scope)(nil)
)
