package crew

import (
	"slices"

	"github.com/cohort-dev/cohort/tool"
)

// ReplaceTools changes the session's tools — the universe every pool is
// cut from — to what replace makes of them (MCP servers set, toggled or
// reconnected, skills reloaded), and gives main its new pool from its next
// request on. Agents running now keep theirs; agents started later get
// the new ones. The tool array is part of the cached prefix: main's next
// request misses the cache.
func (rt *Crew) ReplaceTools(main *Agent, replace func([]tool.Tool) []tool.Tool) {
	rt.toolsMu.Lock()
	rt.tools = slices.Clip(replace(slices.Clone(rt.tools)))
	rt.toolsMu.Unlock()
	if main == nil {
		return
	}
	tools, _ := rt.pool(main)
	main.mu.Lock()
	main.tools = tools
	eng := main.engine
	main.mu.Unlock()
	if eng != nil {
		eng.SetTools(tools)
	}
}

// universe is the session's tools now.
func (rt *Crew) universe() []tool.Tool {
	rt.toolsMu.RLock()
	defer rt.toolsMu.RUnlock()
	return rt.tools
}
