package hook

import "context"

// UserPromptSubmit fires before a prompt reaches the model. It starts a
// new prompt (Runner.NewPrompt): this event and everything that follows
// carry its prompt_id. Block means the prompt is refused (Reason is for
// the user); Context is added for the model.
func (s *Scope) UserPromptSubmit(ctx context.Context, prompt string) Outcome {
	if s == nil {
		return Outcome{}
	}
	s.r.NewPrompt()
	return s.Fire(ctx, Input{HookEventName: UserPromptSubmit, Prompt: prompt})
}

// Stop fires when the lead is about to end its turn. Block means "not yet":
// the agent continues with Reason as its next input, and the next Stop
// carries stopHookActive true.
func (s *Scope) Stop(ctx context.Context, stopHookActive bool) Outcome {
	return s.Fire(ctx, Input{HookEventName: Stop, StopHookActive: &stopHookActive})
}

// SubagentStop is Stop for a subagent (the Scope of the subagent; its
// matcher is the agent type).
func (s *Scope) SubagentStop(ctx context.Context, stopHookActive bool) Outcome {
	return s.Fire(ctx, Input{HookEventName: SubagentStop, StopHookActive: &stopHookActive})
}

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

// WorktreeCreate fires before an agent's worktree is created. Block
// refuses the creation with Reason.
func (s *Scope) WorktreeCreate(ctx context.Context, path, branch string) Outcome {
	return s.Fire(ctx, Input{HookEventName: WorktreeCreate, WorktreePath: path, Branch: branch})
}

// WorktreeRemove fires before a worktree is removed. It cannot block.
func (s *Scope) WorktreeRemove(ctx context.Context, path, branch string) Outcome {
	return s.Fire(ctx, Input{HookEventName: WorktreeRemove, WorktreePath: path, Branch: branch})
}
