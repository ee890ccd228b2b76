package crew

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/transcript"
)

// ErrNoAgent reports an address that names no agent of this session.
var ErrNoAgent = errors.New("no such agent")

// Deliver hands a message to the agent named (or with id) to. A running
// agent gets it in its queue, at its next tool-result boundary. A finished
// one is resumed as a background agent: its conversation continues from its
// history (the same prefix bytes, so it reads the prompt cache) with the
// message as the next user turn, and its parent is notified when it ends.
// A name reaches the running agent that has it, or the latest one to have
// had it. It returns a sentence for the sender.
func (rt *Crew) Deliver(ctx context.Context, to string, block llm.Block) (string, error) {
	for range 2 { // a second time if the agent retired between the lookup and the offer
		a, ok := rt.lookupAddress(to)
		if !ok {
			var err error
			if a, ok, err = rt.recall(to); err != nil {
				return "", err
			}
		}
		if !ok {
			return "", ErrNoAgent
		}
		if info := a.Info(); info.Depth == 0 || info.Team != "" {
			return "", ErrNoAgent
		}
		if a.Engine() == nil && !a.isLive() && !a.isEvicted() {
			return "", fmt.Errorf("agent %s has not started", to)
		}
		switch a.offer(task.Item{Kind: task.ItemTeammateMessage, Text: block.Text}) {
		case offered:
			return fmt.Sprintf("Message delivered to %s; it sees it at its next step.", to), nil
		case offerRetired:
			to = a.ID()
			continue
		}
		t, err := rt.resume(ctx, a, block)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s had finished; it was resumed in the background with your message (task %s) and its result will be reported when it ends.", to, t.ID()), nil
	}
	return "", fmt.Errorf("agent %s could not be reached: it kept leaving memory as the message arrived; send it again", to)
}

// What offer did with a message.
const (
	offered      = iota // queued for the running agent
	offerResume         // a is marked live: the caller resumes it
	offerRetired        // a has left memory (retire.go): recall it first
)

// offer puts it in a's queue if a is live (an activation runs or is about
// to); otherwise it marks a live for the resume the caller starts. The
// decision is made under the lock the end of an activation takes, so a
// message is never left in the queue of an agent that has stopped reading
// it.
func (a *Agent) offer(it task.Item) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.retired:
		return offerRetired
	case a.live:
		a.queue.Enqueue(it)
		return offered
	}
	a.live = true
	return offerResume
}

func (a *Agent) setLive(v bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.live = v
}

func (a *Agent) isLive() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live
}

func (a *Agent) setTask(t *task.Task) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.task = t
}

// resume starts a finished agent again, in the background, on block.
func (rt *Crew) resume(ctx context.Context, a *Agent, block llm.Block) (*task.Task, error) {
	info := a.Info()
	var parentQ *task.Queue
	if p, ok := rt.Lookup(info.ParentID); ok {
		parentQ = p.queue
	}
	desc := "resume " + info.ID
	if info.Name != "" {
		desc = "resume " + info.Name
	}
	spec := task.Spec{Kind: task.KindLocalAgent, Description: desc, Prompt: block.Text, SubagentType: info.Type,
		AgentID: info.ID, Name: info.Name, ParentAgentID: info.ParentID, Queue: parentQ, Background: true,
		Registered: a.setTask}
	run := taskRun{act: activation{content: []llm.Block{block}, origin: transcript.OriginTeammate, prompt: block.Text, start: true}}
	if a.isEvicted() {
		p, err := rt.rebuild(ctx, a)
		if err != nil {
			a.setLive(false)
			return nil, err
		}
		run.plan = p
	}
	t, err := rt.cfg.Tasks.Start(context.WithoutCancel(ctx), spec, rt.taskBody(a, run))
	if err != nil {
		if run.plan != nil {
			run.plan.close()
		}
		a.setLive(false)
		return nil, err
	}
	if p, ok := rt.Lookup(info.ParentID); ok {
		p.ownOutput(t.State().OutputFile)
	}
	return t, nil
}

// Busy reports whether the agent is working now (an activation runs or is
// about to): a message joins its work. An agent that is not busy has
// finished, and a message resumes it (Deliver).
func (a *Agent) Busy() bool { return a.isLive() }
