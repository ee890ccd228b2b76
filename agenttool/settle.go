package agenttool

import (
	"context"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/session"
	"github.com/cohort-dev/cohort/task"
)

// settle keeps an agent going after its turn ended while background tasks
// it started will still report to its queue: each batch of notifications
// is another turn, as print mode does for the lead. Without this a
// subagent that finishes first would orphan its own background agents'
// results. It returns the accumulated result.
func (rt *Runtime) settle(ctx context.Context, eng *engine.Agent, q *task.Queue, res *engine.Result, err error) (*engine.Result, error) {
	for err == nil && res != nil && res.Stop == engine.StopSuccess {
		// Outstanding first: a task stops counting only after its
		// notification is enqueued.
		outstanding := rt.cfg.Tasks.Outstanding(q)
		if q.Len() == 0 {
			if outstanding == 0 {
				return res, nil
			}
			select {
			case <-q.Ready():
			case <-ctx.Done():
				return res, ctx.Err()
			}
			continue
		}
		var blocks []llm.Block
		for _, it := range q.Drain() {
			blocks = append(blocks, llm.Text(it.ModelText()))
		}
		next, nerr := eng.Send(ctx, blocks, session.OriginNotification)
		if next != nil {
			next.Turns += res.Turns
			next.ToolUses += res.ToolUses
			next.Usage = next.Usage.Add(res.Usage)
			next.CostUSD += res.CostUSD
			next.Duration += res.Duration
			res = next
		}
		err = nerr
	}
	return res, err
}
