package cli

import (
	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/tool/web"
)

// searchConfig configures WebSearch: it runs on the session's model when
// that model's provider has the server-side web search, which is the
// Anthropic API (and the scripted model, which speaks it). Otherwise there
// is no WebSearch tool, and definitions naming it get a warning.
func (s *sess) searchConfig() web.SearchConfig {
	if s.model == nil {
		return web.SearchConfig{}
	}
	if _, ok := s.model.model.(*claude.Model); !ok {
		return web.SearchConfig{}
	}
	return web.SearchConfig{Model: s.model.model, ModelName: agent.ResolveAlias(s.model.name, agent.DefaultAliases())}
}
