package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// calls are the tool calls of one assistant message. While the message
// streams, each complete tool_use block is offered: a call of the leading
// run of parallel calls (read-only and concurrency-safe, every call before
// it too) starts at once unless it needs the whole message; the rest start
// once the message has ended, in the groups runTools always used. offer
// and finish run on the Send's goroutine; each started call runs on its
// own.
type calls struct {
	a      *Conversation
	ctx    context.Context // the Send's, cancelled only to abandon the calls
	cancel context.CancelFunc
	sem    chan struct{} // Config.MaxParallelTools slots
	list   []*call
	// early is set while every call offered so far may run in parallel:
	// the next one offered may start before the message ends.
	early bool
	// batch names the message to Preparers: its first call's id.
	batch string
	dones []func()
	wg    sync.WaitGroup
	// cut is set when the response failed after a call had started (see
	// cut.go); retried says the provider was about to send the request
	// again, so the loop goes on instead of ending with cut.
	cut     error
	retried bool
}

// call is one tool call of the message.
type call struct {
	p       *pending
	started bool
	done    chan struct{} // closed once result is set (started calls)
	result  llm.Block
}

func (a *Conversation) newCalls(ctx context.Context) *calls {
	cctx, cancel := context.WithCancel(ctx)
	return &calls{a: a, ctx: cctx, cancel: cancel, sem: make(chan struct{}, a.cfg.MaxParallelTools), early: true}
}

// offer takes a tool_use block that is complete while the message still
// streams, and starts its call if the rules allow.
func (cs *calls) offer(b llm.Block) {
	if cs.batch == "" {
		cs.batch = b.ID
	}
	c := &call{p: cs.a.prepare(b)}
	cs.list = append(cs.list, c)
	if !c.p.parallel() {
		cs.early = false
	}
	if cs.early && !c.p.traits.WholeMessage {
		cs.prepareFor([]*call{c})
		cs.launch(c)
	}
}

// blind stops early starts: the provider stopped a block without handing
// it over, so the calls offered no longer tell what the message holds.
func (cs *calls) blind() { cs.early = false }

// started reports whether any call has started.
func (cs *calls) started() bool {
	return slices.ContainsFunc(cs.list, func(c *call) bool { return c.started })
}

// reset forgets what was offered (nothing started): the provider is
// sending the request again.
func (cs *calls) reset() {
	cs.list, cs.early, cs.batch = nil, true, ""
}

// launch runs c on its own goroutine once a slot is free. A call that
// gets a slot at once emits its EventToolStart before launch returns, so
// that it comes before whatever the Send emits next (an early call's
// before its message's EventAssistant, as the package doc says); one that
// waits for a slot emits it when it gets one.
func (cs *calls) launch(c *call) {
	c.started = true
	c.done = make(chan struct{})
	slot := false
	select {
	case cs.sem <- struct{}{}:
		slot = true
		cs.a.toolStarted(c.p)
	default:
	}
	cs.wg.Add(1)
	go func() {
		defer cs.wg.Done()
		defer close(c.done)
		if !slot {
			select {
			case cs.sem <- struct{}{}:
			case <-cs.ctx.Done():
				c.result = llm.ToolResult(c.p.use.ID, interruptedBeforeText(cs.ctx), true)
				return
			}
			cs.a.toolStarted(c.p)
		}
		defer func() { <-cs.sem }()
		c.result = cs.a.execute(cs.ctx, c.p)
	}()
}

// ErrUserInterrupt is the cause a front end gives the context of a turn
// the user stopped (Esc): the results of the calls it cut short say the
// user stopped them, not that "the agent was stopped".
var ErrUserInterrupt = errors.New("interrupted by the user")

// byUser reports whether ctx ended because the user interrupted.
func byUser(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrUserInterrupt) }

// interruptedBeforeText answers a call the agent was stopped before running.
func interruptedBeforeText(ctx context.Context) string {
	if byUser(ctx) {
		return "Interrupted by the user: they stopped your turn before this call ran. Wait for their next message."
	}
	return "Interrupted: the agent was stopped before this call ran."
}

// prepareFor calls Prepare on every tool of list that implements
// tool.Preparer, with its valid calls in list.
func (cs *calls) prepareFor(list []*call) {
	var order []tool.Tool
	byTool := map[tool.Tool][]tool.Call{}
	for _, c := range list {
		p := c.p
		if p.fail != "" {
			continue
		}
		if _, ok := p.tool.(tool.Preparer); !ok {
			continue
		}
		if _, seen := byTool[p.tool]; !seen {
			order = append(order, p.tool)
		}
		byTool[p.tool] = append(byTool[p.tool], tool.Call{ID: p.use.ID, Input: p.use.Input})
	}
	for _, t := range order {
		env := cs.a.toolEnv()
		if done := t.(tool.Preparer).Prepare(cs.ctx, &env, cs.batch, byTool[t]); done != nil {
			cs.dones = append(cs.dones, done)
		}
	}
}

// finish runs the message's calls to their results, uses being the
// message's tool_use blocks, and returns the tool_result blocks in call
// order. It returns ctx's error, with every call answered (unfinished ones
// as interrupted), when the agent is cancelled. A message cut short after
// a call started (cs.cut) runs only the calls that started.
func (cs *calls) finish(uses []llm.Block) ([]llm.Block, error) {
	defer cs.close()
	if cs.cut != nil {
		return cs.finishCut(), nil
	}
	if err := cs.match(uses); err != nil {
		cs.cancel() // the calls started are not the message's
		results := make([]llm.Block, len(uses))
		for k, u := range uses {
			results[k] = llm.ToolResult(u.ID, "Not run: "+err.Error(), true)
		}
		return results, err
	}
	if cs.batch == "" && len(uses) > 0 {
		cs.batch = uses[0].ID
	}
	rest := len(cs.list)
	for _, u := range uses[rest:] {
		cs.list = append(cs.list, &call{p: cs.a.prepare(u)})
	}
	cs.prepareFor(slices.DeleteFunc(slices.Clone(cs.list), func(c *call) bool { return c.started }))
	results := make([]llm.Block, len(cs.list))
	for i := 0; i < len(cs.list); {
		j := i + 1
		if cs.list[i].p.parallel() {
			for j < len(cs.list) && cs.list[j].p.parallel() {
				j++
			}
		}
		for _, c := range cs.list[i:j] {
			if !c.started {
				cs.launch(c)
			}
		}
		for k, c := range cs.list[i:j] {
			<-c.done
			results[i+k] = c.result
		}
		if err := cs.ctx.Err(); err != nil {
			for k := j; k < len(cs.list); k++ {
				results[k] = llm.ToolResult(cs.list[k].p.use.ID, interruptedBeforeText(cs.ctx), true)
			}
			return results, err
		}
		i = j
	}
	return results, nil
}

// match checks that the calls offered while the message streamed are the
// first of its tool_use blocks: a provider that changed a block after
// handing it over complete would have started a call the message does
// not hold.
func (cs *calls) match(uses []llm.Block) error {
	if len(cs.list) > len(uses) {
		return fmt.Errorf("engine: the model's message has %d tool calls, but %d were streamed complete", len(uses), len(cs.list))
	}
	for k, c := range cs.list {
		if c.p.use.ID != uses[k].ID {
			return fmt.Errorf("engine: the model's message has tool call %q at position %d, but %q was streamed there", uses[k].ID, k, c.p.use.ID)
		}
	}
	return nil
}

// ran counts the calls that ran (or were answered by the engine's own
// checks): every call, or only those that started when the message was
// cut short.
func (cs *calls) ran() int {
	if cs.cut == nil {
		return len(cs.list)
	}
	n := 0
	for _, c := range cs.list {
		if c.started {
			n++
		}
	}
	return n
}

// abandon cancels the started calls and waits for them: the Send ends
// with an infrastructure error and nothing will read their results.
func (cs *calls) abandon() {
	cs.cancel()
	cs.close()
}

// close waits for every started call, then runs the Preparers' dones.
func (cs *calls) close() {
	cs.wg.Wait()
	cs.cancel()
	for i := len(cs.dones) - 1; i >= 0; i-- {
		cs.dones[i]()
	}
	cs.dones = nil
}
