package crew

import (
	"context"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// Eviction: a finished subagent or background agent can be resumed by a
// message (Deliver), so its engine — its whole conversation — would stay
// in memory for the session; a long session that runs thousands of agents
// would grow without bound. Config.EvictAfter after an activation ends
// (long past its notification), the engine is dropped and only the
// agent's record stays: its id, name, type, task and usage. A message then
// rebuilds the engine from the agent's sidechain transcript — the same
// conversation, the same system prompt and tools (rendered again, which
// gives the same bytes within a session), so the resumed request has the
// prefix the agent last sent and reads the prompt cache.

// DefaultEvictAfter is Config.EvictAfter's default.
const DefaultEvictAfter = 2 * time.Minute

// evictable reports whether a's engine may be dropped once it has
// finished: a subagent or background agent (not a fork, whose prompt is
// its parent's, nor a teammate, which lives for the session) with a
// transcript to come back from.
func (rt *Crew) evictable(a *Agent) bool {
	return rt.cfg.Transcripts != nil && rt.cfg.EvictAfter >= 0 && !a.fork && a.info.Depth > 0 &&
		(a.role == agentdef.RoleSubagent || a.role == agentdef.RoleBackground) &&
		(a.info.Kind == tool.KindSubagent || a.info.Kind == tool.KindBackground)
}

// scheduleEvict drops a's engine EvictAfter from now unless it has been
// activated again by then (end is its count of finished activations).
// a.mu is held.
func (rt *Crew) scheduleEvict(a *Agent, end int) {
	if !rt.evictable(a) {
		return
	}
	d := rt.cfg.EvictAfter
	if d == 0 {
		d = DefaultEvictAfter
	}
	time.AfterFunc(d, func() { a.evict(end) })
}

// evict drops the engine if a is still as it was at its end-th finish.
func (a *Agent) evict(end int) {
	a.mu.Lock()
	if a.live || a.ends != end || a.engine == nil || a.busy > 0 {
		a.mu.Unlock()
		return
	}
	u, c := a.engine.Usage()
	a.spent, a.spentUS = a.spent.Add(u), a.spentUS+c
	a.engine, a.evicted = nil, true
	id, t := a.info.ID, a.task
	a.mu.Unlock()
	if f := a.rt.cfg.OnEvict; f != nil {
		f(id)
	}
	if t != nil {
		select {
		case <-t.Done():
		default:
			// Its task has not ended yet (a short EvictAfter can come
			// before it does): it retires when the task ends, which every
			// task does by the session's close.
			go func() {
				<-t.Done()
				a.rt.retire(a, end)
			}()
			return
		}
	}
	a.rt.retire(a, end)
}

func (a *Agent) isEvicted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.evicted
}

// Usage returns what the agent has used in its life: its engine's usage
// plus that of engines dropped by eviction.
func (a *Agent) Usage() (llm.Usage, float64) {
	a.mu.Lock()
	eng, spent, spentUS := a.engine, a.spent, a.spentUS
	a.mu.Unlock()
	if eng == nil {
		return spent, spentUS
	}
	u, c := eng.Usage()
	return spent.Add(u), spentUS + c
}

// rebuild makes an evicted agent's plan again, with its conversation read
// back from its transcript.
func (rt *Crew) rebuild(ctx context.Context, a *Agent) (*setup, error) {
	p, err := rt.buildPlan(ctx, a, planInput{})
	if err != nil {
		p.close()
		return nil, fmt.Errorf("agent %s could not be resumed: %v", a.ID(), err)
	}
	tr, err := transcript.Load(p.transcript)
	if err == nil && len(tr.Messages) == 0 {
		err = fmt.Errorf("it holds no conversation")
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("agent %s's transcript at %s is unreadable: %v", a.ID(), p.transcript, err)
	}
	p.cfg.History = tr.Messages
	return p, nil
}
