package assemble

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
	byModel teammate.Spend
	// api is the time spent in model requests, all agents' summed; asked
	// holds when each agent's request under way was sent.
	api   time.Duration
	asked map[string]time.Time
	// opened is when the session was made (the lead's start).
	opened time.Time
	// ownTools counts the tool calls of the session's own agent (the lead)
	// that ran, as they end: it has no task to count them.
	ownTools int
	// turns counts the lead's turns under way (0 or 1); lastTurn is when
	// its latest one ended.
	turns    int
	lastTurn time.Time
}

// leadTurn marks a turn of the lead under way; the function it returns
// marks its end.
func (c *counter) leadTurn() func() {
	c.mu.Lock()
	c.turns++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.turns--
		c.lastTurn = time.Now()
	}
}

// leadState is whether the lead is in a turn, and when its last one ended.
func (c *counter) leadState() (busy bool, ended time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turns > 0, c.lastTurn
}

func newCounter() *counter {
	return &counter{prices: llm.DefaultPrices, byModel: teammate.Spend{}, asked: map[string]time.Time{},
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

// ownToolDone counts one tool call of the session's own agent that ran.
func (c *counter) ownToolDone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ownTools++
}

// ownToolUses is how many tool calls of the session's own agent have run.
func (c *counter) ownToolUses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ownTools
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

// charge adds spend the session learns of afterwards: a remote job's, as
// its worker reported it.
func (c *counter) charge(model string, u llm.Usage, cost float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.usage = c.usage.Add(u)
	c.costUSD += cost
	addModel(c.byModel, model, u, cost)
}

// addModel adds usage and cost to model's line in byModel.
func addModel(byModel teammate.Spend, model string, u llm.Usage, cost float64) {
	m := byModel[model]
	m.Usage = m.Usage.Add(u)
	m.CostUSD += cost
	byModel[model] = m
}

// spend is a copy of the per-model lines (what a teammate publishes).
func (c *counter) spend() teammate.Spend {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.byModel)
}

// Spending is the session's usage and cost: every agent of this process
// and every teammate the lead started in a process of its own (what each
// last published), in all and per model.
func (s *Session) Spending() (llm.Usage, float64, teammate.Spend) {
	c := s.usage
	c.mu.Lock()
	usage, cost, byModel := c.usage, c.costUSD, maps.Clone(c.byModel)
	c.mu.Unlock()
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

// APITime is the time spent in model requests so far, all agents' summed.
func (s *Session) APITime() time.Duration {
	s.usage.mu.Lock()
	defer s.usage.mu.Unlock()
	return s.usage.api
}
