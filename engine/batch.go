package engine

import (
	"context"
	"encoding/json"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// BatchHooks is an optional capability of Config.Hooks (hook.Scope has
// it): PostToolBatch runs once every call of one model message has its
// result, before the results go back to the model. Text it returns is
// added after the results, for the model. It does not run for a message
// cut short or a Send that was stopped.
type BatchHooks interface {
	PostToolBatch(ctx context.Context, calls []BatchCall) string
}

// BatchCall is one call of a batch and its result.
type BatchCall struct {
	ID, Name string
	Input    json.RawMessage
	Result   *tool.Result
}

// postToolBatch runs the BatchHooks, if any, on the calls of cs and
// returns what they add to results.
func (a *Conversation) postToolBatch(ctx context.Context, cs *calls, results []llm.Block) []llm.Block {
	h, ok := a.cfg.Hooks.(BatchHooks)
	if !ok || len(cs.list) == 0 {
		return results
	}
	batch := make([]BatchCall, len(cs.list))
	for i, c := range cs.list {
		res := c.res
		batch[i] = BatchCall{ID: c.p.use.ID, Name: c.p.use.Name, Input: c.p.use.Input, Result: &res}
	}
	if extra := h.PostToolBatch(ctx, batch); extra != "" {
		results = append(results, llm.Text(extra))
	}
	return results
}
