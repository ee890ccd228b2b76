package assemble

import (
	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/tool/web"
)

// searchConfig configures WebSearch: it runs on the session's model when
// that model's provider has the server-side web search, which is the
// Anthropic API (and the scripted model, which speaks it). Otherwise there
// is no WebSearch tool, and definitions naming it get a warning.
func (s *Session) searchConfig() web.SearchConfig {
	if s.model == nil {
		return web.SearchConfig{}
	}
	m := s.model.model
	if r, ok := m.(*llm.Router); ok {
		m = r.Default // the lead's provider; routes serve provider/model ids
	}
	if _, ok := m.(*claude.Model); !ok {
		return web.SearchConfig{}
	}
	return web.SearchConfig{Model: m, ModelName: agentdef.ResolveAlias(s.model.name, agentdef.DefaultAliases())}
}
