package cli

import (
	"context"
	"encoding/json"

	"github.com/cohort-dev/cohort/tool"
)

// leadTaskTools gives the lead the shared task list of the team it leads.
// The task tools find the list through tool.Env.Team, which is set for
// agents spawned into a team; the lead creates its team after it was built,
// so its env has no team, and TaskCreate after TeamCreate would answer "not
// a team member". The wrapper fills the team in for the lead's calls only.
func (s *sess) leadTaskTools(ts []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = &leadTaskTool{Tool: t, s: s}
	}
	return out
}

type leadTaskTool struct {
	tool.Tool
	s *sess
}

// Run runs the tool, with the lead's team in env when the caller is the
// lead.
func (t *leadTaskTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	if env != nil && env.Team == "" && env.AgentID == t.s.leadID {
		if name := t.s.ledTeam(); name != "" {
			e := *env
			e.Team = name
			env = &e
		}
	}
	return t.Tool.Run(ctx, env, raw)
}

// ledTeam returns the team this session leads ("" when none), from the team
// files: a team's leadSessionId is the session that created it.
func (s *sess) ledTeam() string {
	names, err := s.teams.List()
	if err != nil {
		return ""
	}
	for _, name := range names {
		if t, err := s.teams.Load(name); err == nil && t.Config.LeadSessionID == s.id {
			return name
		}
	}
	return ""
}
