package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Prompter answers "ask" decisions: a terminal dialog, a program named by
// --permission-prompt-command, the lead agent of a team (over its mailbox),
// or nobody (Headless). Implementations must be safe for concurrent use
// (parallel tool calls and agents ask at once) and must return when ctx
// ends.
type Prompter interface {
	Prompt(ctx context.Context, req PromptRequest) (PromptDecision, error)
}

// PromptRequest is what an approver is shown. Its JSON is what a
// permission-prompt command reads on stdin.
type PromptRequest struct {
	ToolName    string          `json:"tool_name"`
	Input       json.RawMessage `json:"input"`
	ToolUseID   string          `json:"tool_use_id,omitempty"`
	AgentID     string          `json:"agent_id,omitempty"`
	Cwd         string          `json:"cwd,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Suggestions []RuleUpdate    `json:"permission_suggestions,omitempty"`
	// Bubble is set when a fork asks its parent's approver.
	Bubble bool `json:"-"`
	// Modes are the user-facing modes, more permissive than the
	// session's, in which the call would run without asking: the advice a
	// denial gives names only these.
	Modes []Mode `json:"-"`
}

// PromptDecision is an approver's answer.
type PromptDecision struct {
	Allow bool
	// Message tells the model why the call was denied (or, for an allow, a
	// note from the approver).
	Message string
	// UpdatedInput replaces the call's input when set (the approver edited
	// it).
	UpdatedInput json.RawMessage
	// Updates are rule changes to apply ("always allow").
	Updates []RuleUpdate
	// NoPerson marks an answer the approver gave by itself with nobody
	// asked (a host's mode, policy or own rule: Claude Code's decision
	// classification "config"). Its allow counts as a mode's, not as a
	// person's approval (Outcome.NoPerson).
	NoPerson bool
}

// Outcome is the final answer for one call after asking, if needed.
type Outcome struct {
	Allow bool
	// Message is what the model reads when the call is denied.
	Message string
	// Input is the input to run the call with (the approver may change it).
	Input json.RawMessage
	// Decision is the checker's own decision before any prompt.
	Decision Decision
	Prompted bool
	// NoPerson is set when the prompt's answer came with nobody asked
	// (PromptDecision.NoPerson): the call is allowed as a mode allows it,
	// and what needs a person's approval (tool.Env.Approved) stays shut.
	NoPerson bool
	// UpdateErr reports rule updates that could not be applied or saved;
	// the call's outcome stands regardless.
	UpdateErr error
}

// Resolve decides a call completely: Check, then for an ask the prompter
// (nil means Headless), then the approver's rule updates. An input the
// approver changed is checked again and still loses to deny rules. A
// prompter error denies the call and is returned too.
func (c *Checker) Resolve(ctx context.Context, req Request, p Prompter) (Outcome, error) {
	d := c.Check(ctx, req)
	out := Outcome{Decision: d, Input: req.Input}
	switch d.Behavior {
	case Allow:
		out.Allow = true
		return out, nil
	case Deny:
		out.Message = d.Reason
		return out, nil
	}
	if p == nil {
		p = Headless{}
	}
	pd, err := p.Prompt(ctx, PromptRequest{ToolName: req.Tool, Input: req.Input, ToolUseID: req.ToolUseID, AgentID: req.AgentID,
		Cwd: req.Cwd, Reason: d.Reason, Suggestions: d.Suggestions, Bubble: d.Bubble, Modes: c.modesAllowing(ctx, req)})
	out.Prompted, out.NoPerson = true, pd.NoPerson
	if err != nil {
		out.Message = fmt.Sprintf("Permission to use %s was not granted: asking for approval failed (%v).", req.Tool, err)
		return out, fmt.Errorf("permission prompt for %s: %w", req.Tool, err)
	}
	if pd.Allow && pd.NoPerson && d.FailClosed {
		// An ask that exists because something could not be checked, or
		// that needs a person in every mode, is not answered by a hook or
		// a host's policy.
		out.Message = fmt.Sprintf("Permission to use %s was not granted: %s It needs a person's approval, and the answer came from a hook or a policy with nobody asked.", req.Tool, d.Reason)
		return out, nil
	}
	var errs []error
	for _, u := range pd.Updates {
		if err := c.Apply(ctx, u); err != nil {
			errs = append(errs, err)
		}
	}
	out.UpdateErr = errors.Join(errs...)
	if !pd.Allow {
		out.Message = pd.Message
		if out.Message == "" {
			out.Message = fmt.Sprintf("The user did not allow this %s call.", req.Tool)
		}
		return out, nil
	}
	if len(pd.UpdatedInput) > 0 {
		again := req
		again.Input = pd.UpdatedInput
		if d2 := c.Check(ctx, again); d2.Behavior == Deny {
			out.Message = "The approver changed the input, and the changed call is denied: " + d2.Reason
			return out, nil
		}
		out.Input = pd.UpdatedInput
	}
	out.Allow = true
	return out, nil
}

// modesAllowing returns the user-facing modes, more permissive than the
// checker's own, in which req would be allowed without asking: what a
// denial may honestly advise.
func (c *Checker) modesAllowing(ctx context.Context, req Request) []Mode {
	var out []Mode
	current := c.Mode()
	for _, m := range []Mode{ModeAcceptEdits, ModeBypassPermissions} {
		if m.Rank() <= current.Rank() || m == current {
			continue
		}
		if c.checkIn(ctx, req, m).Behavior == Allow {
			out = append(out, m)
		}
	}
	return out
}

// Headless is the Prompter of a session nobody watches (print mode): it
// denies what would need approval, telling the model why and how the user
// could allow it.
type Headless struct{}

// Prompt always denies.
func (Headless) Prompt(_ context.Context, req PromptRequest) (PromptDecision, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Permission to use %s was denied: %s Nobody can approve tool calls in this non-interactive session.", req.ToolName, strings.TrimSpace(req.Reason))
	var rules []string
	for _, u := range req.Suggestions {
		if u.Type == UpdateAddRules && u.Behavior == Allow {
			for _, v := range u.Rules {
				rules = append(rules, v.String())
			}
		}
	}
	modes := make([]string, len(req.Modes))
	for i, m := range req.Modes {
		modes[i] = string(m)
	}
	switch {
	case len(rules) > 0:
		fmt.Fprintf(&b, " The user can allow it by running again with --allowedTools %q or by adding it to permissions.allow in .cohort/settings.json", strings.Join(rules, ","))
		if len(modes) > 0 {
			fmt.Fprintf(&b, "; --permission-mode %s also allows it", strings.Join(modes, " or "))
		}
		b.WriteString(".")
	case len(modes) > 0:
		fmt.Fprintf(&b, " The user can allow it with --permission-mode %s, or with a rule in permissions.allow in .cohort/settings.json.", strings.Join(modes, " or "))
	default:
		b.WriteString(" The user can allow it with --allowedTools or a rule in permissions.allow in .cohort/settings.json.")
	}
	b.WriteString(" Do not try to get around this; continue without it or explain what is needed.")
	return PromptDecision{Allow: false, Message: b.String()}, nil
}
