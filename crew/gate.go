package crew

import (
	"bytes"
	"context"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// permissionGate adapts an agent's permission.Checker and the Prompter that
// answers its "ask" decisions to the engine's Gate. Safe for concurrent use
// (the checker and prompter are).
type permissionGate struct {
	checker  *permission.Checker
	prompter permission.Prompter
	// planApprover lets ExitPlanMode through: the tool asks the agent's
	// plan approver (a teammate's lead) instead of a permission prompt.
	planApprover bool
}

// gateFor returns a's permission gate, nil when the session has no
// permissions (everything allowed). When a's hooks have PermissionRequest
// (hook.PermissionHooks), they answer its prompts before its prompter is
// asked.
func (rt *Crew) gateFor(a *Agent, hooks engine.Hooks) engine.Gate {
	if a.checker == nil {
		return nil
	}
	prompter := a.prompter
	if ph, ok := hooks.(hook.PermissionHooks); ok {
		prompter = hook.Prompter{Hooks: ph, Next: prompter, Notify: rt.cfg.NotifyPrompts}
	}
	return permissionGate{checker: a.checker, prompter: prompter, planApprover: a.approver != nil}
}

// Check decides one call; an error from the prompter denies it (fail closed).
func (g permissionGate) Check(ctx context.Context, c *engine.Call) engine.Verdict {
	if g.planApprover && c.Name == "ExitPlanMode" {
		return engine.Verdict{Allow: true}
	}
	req := permission.Request{Tool: c.Name, Input: c.Input, ReadOnly: c.Traits.ReadOnly,
		Cwd: c.Env.Cwd, AgentID: c.Env.Caller.ID, ToolUseID: c.ID}
	if p, ok := c.Tool.(permission.Pather); ok {
		paths, err := p.PermissionPaths(c.Input)
		if err != nil {
			return engine.Verdict{Reason: "the permission check could not read the call's paths: " + err.Error()}
		}
		req.Paths = paths
	}
	if c.HookApproved {
		// A hook's allow replaces the prompt, not the rules: deny rules and
		// explicit ask rules still decide. Nor is it a person: the call is
		// allowed as bypassPermissions would allow it, within the tool's
		// own bounds (the writable set, protected paths, the sandbox), so a
		// user's approve-all hook never lets the model past what no mode
		// lets it past.
		d := g.checker.Check(ctx, req)
		switch {
		case d.Behavior == permission.Deny:
			return engine.Verdict{Reason: d.Reason}
		case d.Behavior == permission.Allow:
			return engine.Verdict{Allow: true, Confinement: tool.ConfineWrite, Approved: personsRule(d.Rule)}
		case d.Rule == nil && !d.FailClosed:
			return engine.Verdict{Allow: true, Confinement: tool.ConfineWrite} // the hook answered the prompt
		}
	}
	prompter := g.prompter
	if pd, ok := c.Tool.(tool.PromptDescriber); ok {
		prompter = describedPrompter{next: prompter, describe: func(ctx context.Context) string {
			return pd.DescribePrompt(ctx, c.Env, c.Input)
		}}
	}
	out, err := g.checker.Resolve(ctx, req, prompter)
	if !out.Allow {
		msg := out.Message
		if msg == "" && err != nil {
			msg = "the permission check failed: " + err.Error()
		}
		if msg == "" {
			msg = "not allowed"
		}
		return engine.Verdict{Reason: msg}
	}
	// Someone, or a rule, approved this call, not the mode: its tool may
	// go past its own bounds as approved (tool.Env.Approved). An answer
	// given with nobody asked is the approver's mode, not a person; a rule
	// of a file obeyed by approval is no person's word on the path.
	v := engine.Verdict{Allow: true, Confinement: confinementOf(out), Approved: (out.Prompted && !out.NoPerson) || personsRule(out.Decision.Rule)}
	if len(out.Input) > 0 && !bytes.Equal(out.Input, c.Input) {
		v.Input = out.Input
	}
	return v
}

// personsRule reports an allow rule that counts as a person's word on
// what it names (tool.Env.Approved): one of the person's own files,
// flags or answers, not of a file obeyed only by approval of its content
// (permission.Rule.ByApproval), which lies where agents write.
func personsRule(r *permission.Rule) bool { return r != nil && !r.ByApproval }

// confinementOf is what an allowed call's programs may do: read only when
// the checker allowed it for being read-only and no one was asked; write
// when a rule, a mode or an approver allowed it.
func confinementOf(out permission.Outcome) tool.Confinement {
	if out.Decision.ReadOnly && !out.Prompted {
		return tool.ConfineReadOnly
	}
	return tool.ConfineWrite
}

// describedPrompter puts a tool's own account of a call (tool.PromptDescriber)
// before the reason of the prompt it is about to get.
type describedPrompter struct {
	next     permission.Prompter
	describe func(context.Context) string
}

func (p describedPrompter) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	if d := p.describe(ctx); d != "" {
		if req.Reason != "" {
			d += "\n\n" + req.Reason
		}
		req.Reason = d
	}
	next := p.next
	if next == nil {
		next = permission.Headless{}
	}
	return next.Prompt(ctx, req)
}
