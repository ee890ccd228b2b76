package assemble

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// canUse answers permission prompts with the plan's Ask (Config.CanUseTool),
// naming the asking agent: one of this process's (its record) or a
// teammate in a process of its own (its team record). The rules an answer
// allows always are kept for every agent of the session and saved to the
// project's local settings; the asker (perhaps a teammate in a process of
// its own) gets them for its session.
type canUse struct{ s *Session }

func (c canUse) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	d, always, err := c.s.Permissions.Ask(ctx, req, c.s.describeAsker(req.AgentID))
	if err != nil {
		return permission.PromptDecision{}, err
	}
	if !d.Allow || len(always) == 0 {
		return d, nil
	}
	if err := c.s.checker.AddRules(ctx, permission.Allow, always, permission.DestLocal); err != nil {
		return permission.PromptDecision{Message: fmt.Sprintf("The answer's rule could not be kept: %v", err)}, nil
	}
	u := permission.RuleUpdate{Type: permission.UpdateAddRules, Behavior: permission.Allow, Destination: permission.DestSession}
	for _, r := range always {
		rule, err := permission.ParseRule(r)
		if err != nil {
			return permission.PromptDecision{Message: fmt.Sprintf("The answer's rule %q does not parse: %v", r, err)}, nil
		}
		u.Rules = append(u.Rules, permission.ValueOf(rule))
	}
	d.Updates = []permission.RuleUpdate{u}
	return d, nil
}

// describeAsker is who asks, by agent id: ID, Name, Kind, Type and Color.
func (s *Session) describeAsker(agentID string) tool.Caller {
	who := tool.Caller{ID: agentID}
	if s.rt != nil {
		if a, ok := s.rt.Lookup(agentID); ok {
			return a.Info()
		}
	}
	if s.team != nil {
		name, _, _ := strings.Cut(agentID, "@")
		for _, m := range s.team.Members() {
			if m.AgentID == agentID || m.Name == name {
				who.Name, who.Kind, who.Type, who.Color = m.Name, tool.KindTeammate, m.AgentType, m.Color
				return who
			}
		}
	}
	if agentID == "" && s.lead != nil {
		who.ID, who.Kind = s.lead.ID(), tool.KindLead
	}
	return who
}

// AllowSuggestions are the allow rules among a prompt's suggested updates,
// as written in settings ("Bash(make:*)"): what a host may keep with its
// answer.
func AllowSuggestions(us []permission.RuleUpdate) []string {
	var out []string
	for _, u := range us {
		if u.Type == permission.UpdateAddRules && u.Behavior == permission.Allow {
			for _, v := range u.Rules {
				out = append(out, v.String())
			}
		}
	}
	return out
}
