package hook

import "context"

// Expansion is a prompt that names a custom slash command, for
// UserPromptExpansion hooks.
type Expansion struct {
	// Name is the command's name without the slash, Args what followed
	// it, Source where the command was read from (projectSettings).
	Name, Args, Source string
	// Prompt is the prompt as typed ("/name args").
	Prompt string
	// Typed says it was typed ahead into a running turn: it starts no
	// prompt (the turn's prompt_id stays) and no UserPromptSubmit follows.
	Typed bool
}

// ExpandSlashCommand is the expansion_type of a custom slash command
// (Claude Code's other kind, mcp_prompt, has no trigger in Cohort).
const ExpandSlashCommand = "slash_command"

// UserPromptExpansion fires before a prompt that names a custom slash
// command is replaced by the command's text; the matcher is the command's
// name. Block refuses the prompt (Reason is for the user); Context is
// added for the model, as UserPromptSubmit's.
func (s *Scope) UserPromptExpansion(ctx context.Context, e Expansion) Outcome {
	if s == nil {
		return Outcome{}
	}
	if !e.Typed {
		// The prompt starts here (its UserPromptSubmit keeps the id).
		s.r.NewPrompt()
		s.r.expanded.Store(true)
	}
	args := e.Args
	out := s.Fire(ctx, Input{HookEventName: UserPromptExpansion, ExpansionType: ExpandSlashCommand,
		CommandName: e.Name, CommandArgs: &args, CommandSource: e.Source, Prompt: e.Prompt})
	if (out.Block || out.Stop) && !e.Typed {
		s.r.expanded.Store(false)
	}
	return out
}
