package agenttool

import (
	"context"

	"github.com/cohort-dev/cohort/tool"
)

// spawnFork runs the fork path (ARCHITECTURE.md section 4).
func (rt *Runtime) spawnFork(ctx context.Context, parent *Agent, env *tool.Env, in Input) (tool.Result, error) {
	return tool.Errorf("Forking is not available in this build yet; pass a subagent_type instead."), nil
}

// spawnTeammate runs the teammate path (ARCHITECTURE.md section 5).
func (rt *Runtime) spawnTeammate(ctx context.Context, parent *Agent, env *tool.Env, in Input) (tool.Result, error) {
	return tool.Errorf("Teammates are not available in this build yet; start a background agent (run_in_background: true) instead."), nil
}
