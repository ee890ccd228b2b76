package crew

import (
	"slices"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// prefixRoles are the agents whose tool arrays start the lead's: the
// session orders the lead's own tools last and the team's tools before
// them, so a subagent's or background agent's array is the lead's first
// run of tools byte for byte, and a teammate's a longer run.
var prefixRoles = []agentdef.PoolInput{
	{Role: agentdef.RoleSubagent, Depth: 1, MaxDepth: 1},
	{Role: agentdef.RoleBackground, Depth: 1, MaxDepth: 1},
	{Role: agentdef.RoleTeammate, Depth: 1, MaxDepth: 1},
}

// sharedToolPrefix returns the lead's breakpoint policy: a breakpoint
// after each run of leading tools another role is offered (the
// subagents' and background agents', then the teammates'), the system
// prompt's and the last message's. The lead's first request then writes
// the entries those agents' first requests read, instead of each group's
// first agent writing the same definitions again. The breakpoint after
// the lead's whole array, which only a request with the same tools and
// another system prompt could read, is kept while there is room: the API
// takes four at most. Nil (the default policy) for any other agent, or
// when no role's run is shorter than the whole array.
func sharedToolPrefix(a *Agent, tools []tool.Tool) func(*llm.Request) {
	if a.Info().Depth > 0 || a.role != agentdef.RoleMain {
		return nil
	}
	ks := prefixLengths(toolNames(tools))
	if len(ks) == 0 {
		return nil
	}
	return func(req *llm.Request) {
		engine.PlaceCacheMarkers(req)
		if n := engine.LastLoadedTool(req.Tools); len(ks) == 2 && n >= 0 {
			req.Tools[n].Cache = false
		}
		for _, k := range ks {
			if k < len(req.Tools) && !req.Tools[k-1].Defer {
				req.Tools[k-1].Cache = true
			}
		}
	}
}

// prefixLengths are the lengths of the leading runs of names the
// prefixRoles keep whole, shortest first: at most two, each above zero
// and below len(names).
func prefixLengths(names []string) []int {
	var ks []int
	for _, in := range prefixRoles {
		out := agentdef.Excluded(names, in)
		k := 0
		for k < len(names) && out[names[k]] == "" {
			k++
		}
		if k > 0 && k < len(names) && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	if len(ks) > 2 {
		ks = ks[:2]
	}
	return ks
}
