package cohort

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
)

// maxOutputTokens is the engine's output limit per response, which a
// thinking budget must stay below.
const maxOutputTokens = 32000

// checkParity checks the Config fields that mirror Claude Code's flags
// --tools, --setting-sources, --max-thinking-tokens and --fallback-model.
func (c Config) checkParity() error {
	known := c.poolNames()
	for _, name := range c.ToolPool {
		if !slices.Contains(known, canonicalTool(name)) {
			return configErr("ToolPool", "--tools: %q is not a tool; name some of %s, or \"\" for none", name, strings.Join(known, ", "))
		}
	}
	for _, src := range c.SettingSources {
		switch settings.Scope(src) {
		case settings.ScopeUser, settings.ScopeProject, settings.ScopeLocal:
		default:
			return configErr("SettingSources", "%q is not a settings source; use user, project and/or local", src)
		}
	}
	if n := c.MaxThinkingTokens; n != 0 && (n < 1024 || n >= maxOutputTokens) {
		return configErr("MaxThinkingTokens", "%d: a thinking budget is at least 1024 tokens and below %d (0 turns thinking off)", n, maxOutputTokens)
	}
	if c.FallbackModel != "" && c.FallbackModel == c.Model {
		return configErr("FallbackModel", "%q is the model itself; name another model to fall back to", c.FallbackModel)
	}
	return nil
}

// poolNames are the names ToolPool may give: Cohort's tools and the
// Config's.
func (c Config) poolNames() []string {
	names := slices.Clone(agentdef.CohortTools)
	for _, t := range c.Tools {
		if t != nil {
			names = append(names, t.Def().Name)
		}
	}
	return names
}

func canonicalTool(name string) string {
	if name == "Task" {
		return "Agent"
	}
	return name
}

// inPool keeps the tools ToolPool names, in their canonical order; all of
// them when it is nil.
func (c Config) inPool(ts []tool.Tool) []tool.Tool {
	if c.ToolPool == nil {
		return ts
	}
	want := map[string]bool{}
	for _, n := range c.ToolPool {
		want[canonicalTool(n)] = true
	}
	return slices.DeleteFunc(ts, func(t tool.Tool) bool { return !want[t.Def().Name] })
}

// fallbackWarning is what the session says when its model falls back.
func fallbackWarning(from, to string, err error) string {
	return fmt.Sprintf("cohort: warning: model %s cannot serve requests (%v); using the fallback model %s for the rest of the session\n", from, err, to)
}
