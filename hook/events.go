package hook

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/cohort-dev/cohort/llm"
)

// UserPromptSubmit fires before a prompt reaches the model. It starts a
// new prompt (Runner.NewPrompt): this event and everything that follows
// carry its prompt_id. Block means the prompt is refused (Reason is for
// the user); Context is added for the model.
func (s *Scope) UserPromptSubmit(ctx context.Context, prompt string) Outcome {
	if s == nil {
		return Outcome{}
	}
	if !s.r.expanded.Swap(false) {
		s.r.NewPrompt()
	}
	return s.Fire(ctx, Input{HookEventName: UserPromptSubmit, Prompt: prompt})
}

// Stop fires when the lead is about to end its turn. Block means "not yet":
// the agent continues with Reason as its next input, and the next Stop
// carries stop_hook_active true (st.Active).
func (s *Scope) Stop(ctx context.Context, st StopState) Outcome {
	return s.Fire(ctx, stopInput(Stop, st))
}

// SubagentStop is Stop for a subagent (the Scope of the subagent; its
// matcher is the agent type). agent_transcript_path is the subagent's
// transcript.
func (s *Scope) SubagentStop(ctx context.Context, st StopState) Outcome {
	in := stopInput(SubagentStop, st)
	if s != nil {
		in.AgentTranscriptPath = s.a.TranscriptPath
	}
	return s.Fire(ctx, in)
}

func stopInput(ev Event, st StopState) Input {
	bg := append(make([]BackgroundTask, 0, len(st.Background)), st.Background...)
	crons := []struct{}{}
	return Input{HookEventName: ev, StopHookActive: &st.Active, LastAssistantMessage: st.LastMessage,
		BackgroundTasks: &bg, SessionCrons: &crons}
}

// StopFailure fires instead of Stop when the lead's turn ended because a
// model request failed (the error's kind is the matcher). It cannot block:
// the turn has already ended.
func (s *Scope) StopFailure(ctx context.Context, f Failure) Outcome {
	return s.Fire(ctx, Input{HookEventName: StopFailure, Error: f.Kind, ErrorDetails: f.Details, LastAssistantMessage: f.LastMessage})
}

// Interrupt fires when the agent's work is interrupted: source says who
// (InterruptUser, InterruptSession), reason why (InterruptStop), via
// through what (ViaTerminal, ViaClient; "" when neither). It cannot block:
// the work is already stopping.
func (s *Scope) Interrupt(ctx context.Context, source, reason, via string) Outcome {
	return s.Fire(ctx, Input{HookEventName: Interrupt, Source: source, EndReason: reason, Via: via})
}

// Who interrupts, why and through what, for Interrupt.
const (
	InterruptUser    = "user"
	InterruptSession = "session"
	InterruptSystem  = "system"
	InterruptStop    = "stop"
	ViaTerminal      = "terminal"
	ViaClient        = "client"
)

// SubagentStart fires in the Scope of a new subagent before its first
// turn, with its prompt. It cannot block; Context is added to the
// subagent's first message.
func (s *Scope) SubagentStart(ctx context.Context, prompt string) Outcome {
	return s.Fire(ctx, Input{HookEventName: SubagentStart, Prompt: prompt})
}

// TeammateIdle fires when a teammate is about to go idle. Block keeps it
// working, with Reason as feedback.
func (s *Scope) TeammateIdle(ctx context.Context, teammate, team string) Outcome {
	return s.Fire(ctx, Input{HookEventName: TeammateIdle, TeammateName: teammate, TeamName: team})
}

// TaskCompleted fires when a task is about to be recorded as finished.
// Block refuses (shared task list: the task stays open) with Reason as
// feedback for the model.
func (s *Scope) TaskCompleted(ctx context.Context, t Task) Outcome {
	return s.Fire(ctx, Input{HookEventName: TaskCompleted, TaskID: t.ID, Status: t.Status, Summary: t.Summary,
		TaskSubject: t.Subject, TaskDescription: t.Description, TeammateName: t.TeammateName, TeamName: t.TeamName})
}

// CwdChanged fires when the agent moved to another working directory
// (EnterWorktree, ExitWorktree), after the move: cwd is the new one. It
// cannot block (the move happened); watchPaths in the answer is ignored,
// as Cohort watches no files for hooks.
func (s *Scope) CwdChanged(ctx context.Context, oldCwd, newCwd string) Outcome {
	return s.Fire(ctx, Input{HookEventName: CwdChanged, Cwd: newCwd, OldCwd: oldCwd, NewCwd: newCwd})
}

// InstructionsLoaded fires for each memory file read into the
// conversation (the matcher is the load reason). It cannot block: the
// file is already part of what the model reads.
func (s *Scope) InstructionsLoaded(ctx context.Context, f MemoryFile) Outcome {
	return s.Fire(ctx, Input{HookEventName: InstructionsLoaded, FilePath: f.Path, MemoryType: f.Type, LoadReason: f.Reason})
}

// PreModelSwitch fires before the agent's model is switched. Block (exit
// 2, decision "block", permissionDecision "deny" or "ask": there is no
// one to ask at this point) cancels the switch, with Reason.
func (s *Scope) PreModelSwitch(ctx context.Context, m ModelSwitch) Outcome {
	return s.Fire(ctx, switchInput(PreModelSwitch, m))
}

// PostModelSwitch fires after the agent's model was switched. It cannot
// block.
func (s *Scope) PostModelSwitch(ctx context.Context, m ModelSwitch) Outcome {
	return s.Fire(ctx, switchInput(PostModelSwitch, m))
}

func switchInput(ev Event, m ModelSwitch) Input {
	requested := json.RawMessage("null")
	if m.Requested != "" {
		requested, _ = json.Marshal(m.Requested)
	}
	return Input{HookEventName: ev, FromModel: m.From, ToModel: m.To, RequestedModel: requested, Source: m.Source,
		ContextTokens: &m.ContextTokens, PromptCacheWarm: &m.CacheWarm, CacheTTL: m.CacheTTL,
		EstimatedCacheWriteUSD: &m.EstimatedUSD, Pricing: m.Pricing}
}

// TaskCreated fires when a task was added to the shared task list (its id,
// subject and description are known). Block takes it back: the task is
// deleted and Reason goes to the model.
func (s *Scope) TaskCreated(ctx context.Context, t Task) Outcome {
	return s.Fire(ctx, Input{HookEventName: TaskCreated, TaskID: t.ID,
		TaskSubject: t.Subject, TaskDescription: t.Description, TeammateName: t.TeammateName, TeamName: t.TeamName})
}

// WorktreeCreate fires before an agent's worktree is created. Block
// refuses the creation with Reason.
func (s *Scope) WorktreeCreate(ctx context.Context, path, branch string) Outcome {
	return s.Fire(ctx, Input{HookEventName: WorktreeCreate, WorktreePath: path, Branch: branch})
}

// WorktreeRemove fires before a worktree is removed. It cannot block.
func (s *Scope) WorktreeRemove(ctx context.Context, path, branch string) Outcome {
	return s.Fire(ctx, Input{HookEventName: WorktreeRemove, WorktreePath: path, Branch: branch})
}

// ErrorKind names a failed model request's error as Claude Code's
// StopFailure input does (rate_limit, overloaded, authentication_failed,
// billing_error, model_not_found, server_error, unknown). A 400
// invalid_request_error is "unknown", as Claude Code 2.1.332 reported it.
func ErrorKind(err error) string {
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		return "unknown"
	}
	switch {
	case ae.Type == "authentication_error" || ae.StatusCode == 401:
		return "authentication_failed"
	case ae.Type == "billing_error" || ae.StatusCode == 402:
		return "billing_error"
	case ae.Type == "rate_limit_error" || ae.StatusCode == 429:
		return "rate_limit"
	case ae.Type == "overloaded_error" || ae.StatusCode == 529:
		return "overloaded"
	case ae.Type == "not_found_error" || ae.StatusCode == 404:
		return "model_not_found"
	case ae.StatusCode >= 500 || ae.Type == "api_error":
		return "server_error"
	}
	return "unknown"
}
