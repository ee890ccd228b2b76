package cohort

import (
	"context"
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
	c.s.describeAsker(&pr)
	d, err := c.s.cfg.CanUseTool(ctx, pr)
	if err != nil {
		return permission.PromptDecision{}, err
	}
	return permission.PromptDecision{Allow: d.Allow, Message: d.Message, UpdatedInput: d.UpdatedInput}, nil
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
