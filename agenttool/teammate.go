package agenttool

import (
	"context"

	"github.com/cohort-dev/cohort/tool"
)

// spawnTeammate runs the teammate path (ARCHITECTURE.md section 5).
func (rt *Runtime) spawnTeammate(ctx context.Context, parent *Agent, env *tool.Env, in Input) (tool.Result, error) {
	return tool.Errorf("Teammates are not available in this build yet; start a background agent (run_in_background: true) instead."), nil
}
