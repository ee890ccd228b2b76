package cohort

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/permission"
)

// canUse answers permission prompts with Config.CanUseTool, naming the
// asking agent: one of this process's (its record) or a teammate in a
// process of its own (its team record).
type canUse struct{ s *Session }

func (c canUse) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	pr := PermissionRequest{Tool: req.ToolName, Input: req.Input, ToolUseID: req.ToolUseID,
		Reason: req.Reason, AgentID: req.AgentID}
	for _, u := range req.Suggestions {
		if u.Type == permission.UpdateAddRules && u.Behavior == permission.Allow {
			for _, v := range u.Rules {
				pr.Suggestions = append(pr.Suggestions, v.String())
			}
		}
	}
	c.s.describeAsker(&pr)
	d, err := c.s.cfg.CanUseTool(ctx, pr)
	if err != nil {
		return permission.PromptDecision{}, err
	}
	out := permission.PromptDecision{Allow: d.Allow, Message: d.Message, UpdatedInput: d.UpdatedInput}
	if d.Allow && len(d.AlwaysAllow) > 0 {
		// The lead's checker holds the rule for this process's agents and
		// saves it in the lead's project; the asker (perhaps a teammate in
		// a process of its own) gets it for its session.
		if err := c.s.checker.AddRules(ctx, permission.Allow, d.AlwaysAllow, permission.DestLocal); err != nil {
			return permission.PromptDecision{Message: fmt.Sprintf("The answer's rule could not be kept: %v", err)}, nil
		}
		u := permission.RuleUpdate{Type: permission.UpdateAddRules, Behavior: permission.Allow, Destination: permission.DestSession}
		for _, r := range d.AlwaysAllow {
			rule, err := permission.ParseRule(r)
			if err != nil {
				return permission.PromptDecision{Message: fmt.Sprintf("The answer's rule %q does not parse: %v", r, err)}, nil
			}
			u.Rules = append(u.Rules, permission.ValueOf(rule))
		}
		out.Updates = []permission.RuleUpdate{u}
	}
	return out, nil
}

// describeAsker fills in who asks.
func (s *Session) describeAsker(pr *PermissionRequest) {
	if s.rt != nil {
		if a, ok := s.rt.Lookup(pr.AgentID); ok {
			rec := a.Info()
			pr.AgentName, pr.AgentKind, pr.AgentType, pr.Color = rec.Name, string(rec.Kind), rec.Type, rec.Color
			return
		}
	}
	if s.team != nil {
		name, _, _ := strings.Cut(pr.AgentID, "@")
		for _, m := range s.team.Members() {
			if m.AgentID == pr.AgentID || m.Name == name {
				pr.AgentName, pr.AgentKind, pr.AgentType, pr.Color = m.Name, "teammate", m.AgentType, m.Color
				return
			}
		}
	}
	if pr.AgentID == "" && s.lead != nil {
		pr.AgentID, pr.AgentKind = s.lead.ID(), "lead"
	}
}
