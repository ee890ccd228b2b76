package crew

import (
	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// sharedToolPrefix returns the lead's breakpoint policy: the default one,
// plus a breakpoint after the longest run of leading tools a teammate is
// also offered. The session orders the lead's own tools last, so a
// teammate's tool array is that run byte for byte, and its first request
// reads the entry the lead's first request wrote instead of writing its
// own. Nil (the default policy) for any other agent, or when no such run
// is shorter than the whole array; the lead then has four breakpoints,
// the API's most.
func sharedToolPrefix(a *Agent, tools []tool.Tool) func(*llm.Request) {
	if a.Info().Depth > 0 || a.role != agentdef.RoleMain {
		return nil
	}
	names := toolNames(tools)
	out := agentdef.Excluded(names, agentdef.PoolInput{Role: agentdef.RoleTeammate, Depth: 1, MaxDepth: 1})
	k := 0
	for k < len(names) && out[names[k]] == "" {
		k++
	}
	if k == 0 || k == len(names) {
		return nil
	}
	return func(req *llm.Request) {
		engine.PlaceCacheMarkers(req)
		if k < len(req.Tools) {
			req.Tools[k-1].Cache = true
		}
	}
}
