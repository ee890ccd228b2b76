package crew

import (
	"context"
	"fmt"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// ApproveMode checks the mode a definition gives an agent spawned below
// parent. A definition may lower the mode; raising it above the parent's
// needs the user's approval when the definition comes from the project
// (a cloned repository must not escalate its own agents), asked through
// the parent's prompter (headless print mode denies). Definitions from the
// user's own directories, the command line and the built-ins are the
// user's choice and pass. A refusal is a *Refusal for the model.
func (rt *Crew) ApproveMode(ctx context.Context, parent *Agent, env *tool.Env, def *agentdef.Definition, mode permission.Mode) error {
	pm := parent.Mode()
	if def == nil || def.Source.Level != agentdef.LevelProject || def.PermissionMode == "" || !mode.Exceeds(pm) {
		return nil
	}
	reason := fmt.Sprintf("The agent type %q, defined by the project in %s, asks to run in %s mode, which allows more than the %s mode of the agent starting it.",
		def.Name, def.Source.Path, mode, pm)
	req := permission.PromptRequest{ToolName: AgentToolName, AgentID: parent.ID(), Reason: reason}
	if env != nil {
		req.ToolUseID, req.Cwd = env.ToolUseID, env.Cwd
	}
	d, err := rt.prompterOf(parent).Prompt(ctx, req)
	if err == nil && d.Allow {
		return nil
	}
	why := d.Message
	if err != nil {
		why = err.Error()
	}
	if why == "" {
		why = "nobody approved it"
	}
	return refuse("%s It was not approved (%s), so the agent was not started. Start it with mode: %q (or a stricter one), or ask the user to approve the definition's mode.",
		reason, why, pm)
}

// prompterOf is whoever answers a's questions: its hooks' PermissionRequest
// first, then its prompter.
func (rt *Crew) prompterOf(a *Agent) permission.Prompter {
	p := a.prompter
	if p == nil {
		p = rt.cfg.Prompter
	}
	if ph, ok := a.Hooks().(hook.PermissionHooks); ok {
		p = hook.Prompter{Hooks: ph, Next: p, Notify: rt.cfg.NotifyPrompts}
	}
	return p
}
