package agenttool

import (
	"bytes"
	"context"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/permission"
)

// PermissionGate adapts a permission.Checker and the Prompter that answers
// its "ask" decisions to the engine's Gate.
type PermissionGate struct {
	Checker  *permission.Checker
	Prompter permission.Prompter
}

// Check decides one call; an error from the prompter denies it (fail closed).
func (g PermissionGate) Check(ctx context.Context, c *engine.Call) engine.Verdict {
	req := permission.Request{Tool: c.Name, Input: c.Input, ReadOnly: c.Traits.ReadOnly,
		Cwd: c.Env.Cwd, AgentID: c.Env.AgentID, ToolUseID: c.ID}
	if c.HookApproved {
		// A hook's allow replaces the prompt, not the rules: deny rules and
		// explicit ask rules still decide.
		d := g.Checker.Check(ctx, req)
		switch {
		case d.Behavior == permission.Deny:
			return engine.Verdict{Reason: d.Reason}
		case d.Behavior == permission.Allow || (d.Rule == nil && !d.FailClosed):
			return engine.Verdict{Allow: true}
		}
	}
	out, err := g.Checker.Resolve(ctx, req, g.Prompter)
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
	v := engine.Verdict{Allow: true}
	if len(out.Input) > 0 && !bytes.Equal(out.Input, c.Input) {
		v.Input = out.Input
	}
	return v
}
