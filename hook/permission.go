package hook

import (
	"context"
	"encoding/json"

	"github.com/cohort-dev/cohort/permission"
)

// PermissionRequest fires when a tool call is about to be put to the
// user's approval (the permission gate answered "ask"), with the call and
// the rule updates that would allow it. The hooks may answer for the user:
// Decision Allow (with UpdatedInput when they rewrote the call), Deny with
// Reason for the model (exit 2 denies too, with stderr), or nothing, and
// the prompt goes ahead. Stop is set when a deny asked to interrupt the
// agent. A hook that failed never leaves an allow behind.
func (s *Scope) PermissionRequest(ctx context.Context, req permission.PromptRequest) Outcome {
	in := Input{HookEventName: PermissionRequest, ToolName: req.ToolName, ToolInput: req.Input, ToolUseID: req.ToolUseID, Cwd: req.Cwd}
	if len(in.ToolInput) == 0 {
		in.ToolInput = json.RawMessage("{}")
	}
	if len(req.Suggestions) > 0 {
		if data, err := json.Marshal(req.Suggestions); err == nil {
			in.PermissionSuggestions = data
		}
	}
	return s.Fire(ctx, in)
}

// Prompter answers permission prompts with an agent's PermissionRequest
// hooks before anyone is asked: a hook's allow or deny is the answer (an
// allow given with nobody asked, PromptDecision.NoPerson), and
// when no hook decides, Next is asked (nil means permission.Headless).
// With Notify set, a Notification (permission_prompt) fires before Next is
// asked, for front ends where a person answers. Safe for concurrent use.
type Prompter struct {
	// Hooks are the agent's (a *Scope); nil asks Next at once.
	Hooks  PermissionHooks
	Next   permission.Prompter
	Notify bool
}

var _ permission.Prompter = Prompter{}

// Prompt implements permission.Prompter.
func (p Prompter) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	next := p.Next
	if next == nil {
		next = permission.Headless{}
	}
	if p.Hooks == nil {
		return next.Prompt(ctx, req)
	}
	o := p.Hooks.PermissionRequest(ctx, req)
	switch {
	case o.Block || o.Decision == Deny:
		msg := o.Reason
		if o.Stop && o.StopReason != "" {
			msg += "\n" + o.StopReason
		}
		return permission.PromptDecision{Allow: false, Message: msg}, nil
	case o.Decision == Allow:
		// A hook is not a person: its allow answers the prompt as a mode
		// would (NoPerson), so what needs a person's approval stays shut.
		return permission.PromptDecision{Allow: true, UpdatedInput: o.UpdatedInput, NoPerson: true}, nil
	}
	if p.Notify {
		p.Hooks.Notification(ctx, Notice{Type: NoticePermission, Title: "Permission needed",
			Message: "Cohort needs your permission to use " + req.ToolName})
	}
	return next.Prompt(ctx, req)
}
