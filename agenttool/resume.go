package agenttool

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/session"
	"github.com/cohort-dev/cohort/task"
)

// ErrNoAgent reports an address that names no agent of this session.
var ErrNoAgent = errors.New("no such agent")

// Deliver hands a message to the agent named (or with id) to. A running
// agent gets it in its queue, at its next tool-result boundary. A finished
// one is resumed as a background agent: its conversation continues from its
// history (the same prefix bytes, so it reads the prompt cache) with the
// message as the next user turn, and its parent is notified when it ends.
// It returns a sentence for the sender.
func (rt *Runtime) Deliver(ctx context.Context, to string, block llm.Block) (string, error) {
	a, ok := rt.Lookup(to)
	if !ok {
		a, ok = rt.LookupName(to)
	}
	if !ok || a.Depth == 0 || a.Team != "" {
		return "", ErrNoAgent
	}
	if t, ok := rt.cfg.Tasks.Get(a.ID); ok && !t.State().Status.Terminal() {
		a.Queue.Enqueue(task.Item{Kind: task.ItemTeammateMessage, Text: block.Text})
		return fmt.Sprintf("Message delivered to %s; it sees it at its next step.", to), nil
	}
	eng := a.Engine()
	if eng == nil {
		return "", fmt.Errorf("agent %s has not started", to)
	}
	parentQ := (*task.Queue)(nil)
	if p, ok := rt.Lookup(a.ParentID); ok {
		parentQ = p.Queue
	}
	desc := "resume " + a.ID
	if a.Name != "" {
		desc = "resume " + a.Name
	}
	spec := task.Spec{Kind: task.KindLocalAgent, Description: desc, Prompt: block.Text, SubagentType: a.Type,
		AgentID: a.ID, Name: a.Name, ParentAgentID: a.ParentID, Queue: parentQ, Background: true}
	t, err := rt.cfg.Tasks.Start(context.WithoutCancel(ctx), spec, func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		if err := rt.acquire(ctx, t); err != nil {
			return task.Outcome{}, err
		}
		defer rt.release()
		if rt.cfg.Transcripts != nil {
			rec, closeFn, err := rt.cfg.Transcripts(a)
			if err != nil {
				return task.Outcome{}, err
			}
			eng.SetRecorder(rec)
			if closeFn != nil {
				defer closeFn()
			}
		}
		eng.SetSink(taskSink(t, rt.cfg.Sink))
		res, err := eng.Send(ctx, []llm.Block{block}, session.OriginTeammate)
		res, err = rt.settle(ctx, eng, a.Queue, res, err)
		a.setResult(res)
		if err != nil {
			return task.Outcome{}, err
		}
		return task.Outcome{Text: outcomeText(res), TotalTokens: res.Usage.Total(), ToolUses: res.ToolUses}, nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s had finished; it was resumed in the background with your message (task %s) and its result will be reported when it ends.", to, t.ID()), nil
}
