package agenttool

import (
	"context"

	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/tool"
)

// spawnTeammate runs the teammate path (ARCHITECTURE.md section 5) through
// the configured spawner.
func (rt *Runtime) spawnTeammate(ctx context.Context, parent *Agent, env *tool.Env, in Input) (tool.Result, error) {
	if !rt.flags().Bool(flags.AgentTeams) {
		return tool.Errorf("Teams are turned off (the agent_teams flag); start a background agent (run_in_background: true) instead."), nil
	}
	if rt.cfg.Teammates == nil {
		return tool.Errorf("Teammates are not available in this session; start a background agent (run_in_background: true) instead."), nil
	}
	if parent.Depth > 0 {
		return tool.Errorf("Only the lead of a team can spawn teammates; you are a subagent. Start a subagent instead."), nil
	}
	if bad := rt.teammateIsolation(in); bad != nil {
		return *bad, nil
	}
	return rt.cfg.Teammates.SpawnTeammate(ctx, parent, env, in)
}
