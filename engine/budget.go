package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/llm"
)

// The pre-send spend check. Before every model request (a turn or a
// compaction's summary) the engine reserves the request's estimated spend
// against Config.Budget, the agent's account, and sends nothing when that
// would take the agent, its team or the session past a cap: the Send then
// ends with StopBudget and Result.Capped saying which cap. The response's
// actual spend settles the reservation.
//
// The estimate is the request's input tokens (nextRequestTokens, or the
// whole request for a summary) priced as the last response's input was
// split between cache reads, cache writes and uncached input — the part
// the last response covered at its mix, what was added since as cache
// writes when the last response used the cache, else as input — and, with
// no response yet, all of it as cache writes (the dearer guess); input
// the last response does not cover counts uncoveredMargin times. Output is
// the agent's mean output per response so far, or firstOutputGuess before
// its first.

// firstOutputGuess is the output tokens expected of an agent's first
// response.
const firstOutputGuess = 512

// uncoveredMargin scales the input a previous response's usage does not
// cover: it is estimated at bytesPerToken, which errs low on JSON and
// code, and a cap must not be crossed by the estimate's error.
const uncoveredMargin = 1.25

// estimateSpend is the estimated spend of a request of input tokens.
func (a *Conversation) estimateSpend(model string, input int64) budget.Spend {
	a.mu.Lock()
	last, total, n := a.lastUsage, a.usage, a.responses
	a.mu.Unlock()
	var u llm.Usage
	if prior := last.TotalInput(); prior > 0 {
		covered := min(input, prior)
		u.CacheReadInputTokens = covered * last.CacheReadInputTokens / prior
		u.CacheCreationInputTokens = covered * last.CacheCreationInputTokens / prior
		u.InputTokens = covered - u.CacheReadInputTokens - u.CacheCreationInputTokens
		if added := margin(input - covered); last.CacheReadInputTokens+last.CacheCreationInputTokens > 0 {
			u.CacheCreationInputTokens += added
		} else {
			u.InputTokens += added
		}
	} else {
		u.CacheCreationInputTokens = margin(input)
	}
	u.OutputTokens = firstOutputGuess
	if n > 0 {
		u.OutputTokens = total.OutputTokens / int64(n)
	}
	if m := int64(a.cfg.MaxTokens); m > 0 {
		u.OutputTokens = min(u.OutputTokens, m)
	}
	return budget.Spend{Tokens: u.Total(), USD: a.cfg.Prices.Cost(model, u)}
}

func margin(tokens int64) int64 { return int64(float64(tokens) * uncoveredMargin) }

// reserve holds a request's estimated spend (nil hold: no budget).
func (a *Conversation) reserve(ctx context.Context, model string, input int64) (*budget.Hold, error) {
	if a.cfg.Budget == nil {
		return nil, nil
	}
	h, err := a.cfg.Budget.Reserve(ctx, a.estimateSpend(model, input))
	var r *budget.Reached
	if err != nil && !errors.As(err, &r) {
		return nil, fmt.Errorf("engine: spend caps: %w", err)
	}
	return h, err
}

// settle replaces a hold with what resp cost (nil: the request failed).
func (a *Conversation) settle(h *budget.Hold, resp *llm.Response) error {
	var s budget.Spend
	if resp != nil {
		s = budget.Spend{Tokens: resp.Usage.Total(), USD: a.price(resp)}
	}
	if err := h.Settle(s); err != nil {
		return fmt.Errorf("engine: spend caps: %w", err)
	}
	return nil
}

// capped reports err as the cap it reached, if it is one.
func capped(err error) (*budget.Reached, bool) {
	var r *budget.Reached
	return r, errors.As(err, &r)
}
