package crew

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/fork"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// forkWait bounds how long later siblings wait for the first fork's first
// token before starting anyway.
const forkWait = 30 * time.Second

// forkGate orders a fan-out: the first fork of a parent message runs at once;
// its siblings wait until it has streamed its first token, so that they read
// the prefix it wrote to the prompt cache.
type forkGate struct {
	first  chan struct{}
	once   sync.Once
	forget func() // drops the gate from the runtime's table
}

// release lets the siblings go; the gate is no longer needed afterwards.
func (g *forkGate) release() {
	g.once.Do(func() {
		close(g.first)
		g.forget()
	})
}

// wait holds a later sibling until the first has begun (or forkWait).
func (g *forkGate) wait(ctx context.Context) error {
	select {
	case <-g.first:
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(forkWait):
	}
	return nil
}

// gateFor returns the gate of the parent message key names, and whether the
// caller is the first fork of that message.
func (rt *Crew) forkGateFor(key string) (*forkGate, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if g, ok := rt.forks[key]; ok {
		return g, false
	}
	g := &forkGate{first: make(chan struct{})}
	g.forget = func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		if rt.forks[key] == g {
			delete(rt.forks, key)
		}
	}
	rt.forks[key] = g
	return g, true
}

// spawnFork runs the fork path: the child's
// request is the parent's last request byte for byte, its history the
// forked conversation (package internal/fork).
func (rt *Crew) spawnFork(ctx context.Context, parent *Agent, env *tool.Env, req Request) (*Spawned, error) {
	if parent.isFork() {
		return nil, refuse("A fork cannot fork: you are a forked worker. Do the work of your directive yourself.")
	}
	pinfo := parent.Info()
	depth := pinfo.Depth + 1
	if depth > rt.cfg.MaxDepth {
		return nil, refuse("Cannot fork: the nesting limit of %d levels is reached. Do this part of the work yourself.", rt.cfg.MaxDepth)
	}
	peng := parent.Engine()
	base := peng.LastRequest()
	hist := peng.History()
	if base == nil || len(hist) == 0 || hist[len(hist)-1].Role != llm.RoleAssistant {
		return nil, refuse("Cannot fork here: there is no assistant turn to fork from.")
	}
	assistant := hist[len(hist)-1]
	if !slices.ContainsFunc(assistant.ToolUses(), func(b llm.Block) bool { return b.ID == env.ToolUseID }) {
		return nil, refuse("Cannot fork: this call is not part of the agent's latest message.")
	}
	child := rt.newAgent(parent, parent.def, agentdef.RoleBackground, tool.Caller{ID: NewAgentID(), Name: req.Name,
		Kind: tool.KindFork, Type: "fork", Model: base.Model, Mode: pinfo.Mode, Cwd: pinfo.Cwd, Depth: depth,
		ParentToolUseID: env.ToolUseID})
	child.fork = true
	ws, err := rt.isolate(ctx, child, env, req)
	if err != nil {
		return nil, err
	}
	parent.mu.Lock()
	tools := slices.Clone(parent.tools)
	parent.mu.Unlock()
	history := fork.Messages(base.Messages, assistant, ws.directive(req.Prompt))
	p, err := rt.buildPlan(ctx, child, planInput{parent: base, tools: tools, history: history})
	if err != nil {
		p.close()
		ws.abandon(ctx)
		return nil, refuse("Could not prepare the fork: %v", err)
	}
	p.cfg.Env.Files = env.Files.Clone()
	run := taskRun{plan: p, history: history, act: activation{prompt: req.Prompt, start: true}}
	if rt.flags().Bool(flags.SiblingGate) {
		gate, first := rt.forkGateFor(parent.ID() + "/" + assistantKey(assistant))
		if first {
			run.firstToken, run.done = gate.release, gate.release // also when it fails before its first token
		} else {
			run.wait = gate.wait
		}
	}
	req.Background = true
	spec := rt.taskSpec(child, parent, req, p.transcript)
	return rt.startTask(ctx, child, spec, ws, run, "Could not start the fork: %v")
}

// assistantKey identifies one assistant message (the fan-out a gate orders)
// by the ids of its tool calls.
func assistantKey(m llm.Message) string {
	var ids []string
	for _, u := range m.ToolUses() {
		ids = append(ids, u.ID)
	}
	return strings.Join(ids, ",")
}
