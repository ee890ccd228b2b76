package workflowrun

import (
	"fmt"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/workflow/host"
)

// PrefixTokens is the estimate's size of one agent's prompt prefix (system
// prompt, tool definitions and its first message): what every agent()
// pays before it does anything.
const PrefixTokens = 12_000

// Estimate is what a run's agents will cost at least: each agent() call
// site in the script run once, each paying one uncached prompt prefix at
// model's input price. Loops and pipelines run call sites many times, so
// it is a floor.
func Estimate(prices llm.PriceTable, model string, c host.Checked) (usd float64, ok bool) {
	p, ok := prices.Lookup(model)
	if !ok {
		return 0, false
	}
	return p.Cost(llm.Usage{InputTokens: int64(c.AgentCalls) * PrefixTokens}), true
}

func (t *Tool) estimate(env *tool.Env, c host.Checked) string {
	return estimateText(t.cfg.Runtime, env.Caller.Model, c)
}

// estimateText words Estimate for a run below an agent on model: its
// agents run general-purpose's model, else the caller's.
func estimateText(rt *crew.Crew, model string, c host.Checked) string {
	if def, ok := rt.Catalog().Get(agentdef.GeneralPurpose); ok && def.Model != "" && def.Model != "inherit" {
		model = def.Model
	}
	usd, ok := Estimate(rt.Prices(), model, c)
	if !ok {
		return fmt.Sprintf("Estimate: at least %d agents (no price known for %s).", c.AgentCalls, model)
	}
	return fmt.Sprintf("Estimate: at least %d agents × ~%dk prompt tokens ≈ $%.4f at %s input prices (loops and pipelines run more).",
		c.AgentCalls, PrefixTokens/1000, usd, model)
}
