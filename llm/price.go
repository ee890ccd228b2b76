package llm

import "strings"

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheWrite float64 `json:"cache_write"`
	CacheRead  float64 `json:"cache_read"`
}

// Cost prices u.
func (p Price) Cost(u Usage) float64 {
	const per = 1e6
	return (float64(u.InputTokens)*p.Input +
		float64(u.OutputTokens)*p.Output +
		float64(u.CacheCreationInputTokens)*p.CacheWrite +
		float64(u.CacheReadInputTokens)*p.CacheRead) / per
}

// PriceTable maps a model id, or a family prefix of one ("claude-opus"), to
// its price. Lookups try the exact id first, then the longest matching
// prefix.
type PriceTable map[string]Price

// DefaultPrices are list prices for the current Claude families, with the
// usual cache multipliers (writes 1.25×, reads 0.1× of input). Settings may
// override or extend them.
var DefaultPrices = PriceTable{
	"claude-opus":   {Input: 5, Output: 25, CacheWrite: 6.25, CacheRead: 0.5},
	"claude-sonnet": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3},
	"claude-haiku":  {Input: 1, Output: 5, CacheWrite: 1.25, CacheRead: 0.1},
	"scripted":      {},
}

// Lookup returns the price for model and whether one was found. A routed
// id ("openai/gpt-4.1", see Router) that the table does not list as such is
// looked up again without its route.
func (t PriceTable) Lookup(model string) (Price, bool) {
	if p, ok := t.lookup(model); ok {
		return p, true
	}
	if _, id, ok := strings.Cut(model, "/"); ok {
		return t.lookup(id)
	}
	return Price{}, false
}

func (t PriceTable) lookup(model string) (Price, bool) {
	if p, ok := t[model]; ok {
		return p, true
	}
	best, found := "", false
	for k := range t {
		if strings.HasPrefix(model, k) && len(k) > len(best) {
			best, found = k, true
		}
	}
	return t[best], found
}

// Cost prices u for model; unknown models (every local model, unless the
// table lists it) cost nothing.
func (t PriceTable) Cost(model string, u Usage) float64 {
	p, _ := t.Lookup(model)
	return p.Cost(u)
}
