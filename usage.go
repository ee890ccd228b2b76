package cohort

import (
	"maps"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/teammate"
)

// counter adds up the usage and cost of every response any agent of the
// session gets, in all and per model, for the result events.
type counter struct {
	mu      sync.Mutex
	prices  llm.PriceTable
	usage   llm.Usage
	costUSD float64
	byModel map[string]*ModelUsage
	// api is the time spent in model requests, all agents' summed; asked
	// holds when each agent's request under way was sent.
	api   time.Duration
	asked map[string]time.Time
	// opened is when the session was made (the lead's start).
	opened time.Time
}

func newCounter() *counter {
	return &counter{prices: llm.DefaultPrices, byModel: map[string]*ModelUsage{}, asked: map[string]time.Time{},
		opened: time.Now()}
}

func (c *counter) requestStarted(agentID string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked[agentID] = t
}

func (c *counter) responded(agentID string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at, ok := c.asked[agentID]; ok {
		c.api += t.Sub(at)
		delete(c.asked, agentID)
	}
}

// apiTime is the time spent in model requests so far.
func (c *counter) apiTime() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.api
}

func (c *counter) setPrices(p llm.PriceTable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prices = p
}

// count adds one response.
func (c *counter) count(r *llm.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := c.prices.Cost(r.Model, r.Usage)
	c.usage = c.usage.Add(r.Usage)
	c.costUSD += cost
	addModel(c.byModel, r.Model, r.Usage, cost)
}

// addModel adds usage and cost to model's line in byModel.
func addModel(byModel map[string]*ModelUsage, model string, u llm.Usage, cost float64) {
	m := byModel[model]
	if m == nil {
		m = &ModelUsage{}
		byModel[model] = m
	}
	m.InputTokens += u.InputTokens
	m.OutputTokens += u.OutputTokens
	m.CacheReadInputTokens += u.CacheReadInputTokens
	m.CacheCreationInputTokens += u.CacheCreationInputTokens
	m.CostUSD += cost
}

// totals returns the session's usage and cost so far, and a copy of the
// per-model lines.
func (c *counter) totals() (llm.Usage, float64, map[string]*ModelUsage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byModel := make(map[string]*ModelUsage, len(c.byModel))
	for k, v := range maps.All(c.byModel) {
		cp := *v
		byModel[k] = &cp
	}
	return c.usage, c.costUSD, byModel
}

// spend is the counter's per-model lines as a teammate publishes them.
func (c *counter) spend() teammate.Spend {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(teammate.Spend, len(c.byModel))
	for model, m := range c.byModel {
		out[model] = teammate.ModelSpend{Usage: llm.Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
			CacheReadInputTokens: m.CacheReadInputTokens, CacheCreationInputTokens: m.CacheCreationInputTokens}, CostUSD: m.CostUSD}
	}
	return out
}

// spending is the session's usage and cost: every agent of this process
// (the counter) and every teammate the lead started in a process of its
// own (what each last published), in all and per model.
func (s *Session) spending() (llm.Usage, float64, map[string]*ModelUsage) {
	usage, cost, byModel := s.usage.totals()
	if s.team == nil || s.mate != nil {
		return usage, cost, byModel
	}
	for _, pm := range s.team.ProcessMembers() {
		for model, ms := range pm.Spend {
			usage, cost = usage.Add(ms.Usage), cost+ms.CostUSD
			addModel(byModel, model, ms.Usage, ms.CostUSD)
		}
	}
	return usage, cost, byModel
}
