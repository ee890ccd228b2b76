package agenttool

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/session"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// ForkTag opens the boilerplate of every fork's directive; finding it in an
// agent's history marks the agent as a fork (the second recursion guard,
// besides Agent.Fork).
const ForkTag = "<fork-boilerplate>"

// forkBoilerplate tells a fork what it is. It is the same for every fork,
// so it is part of what siblings share up to their directives.
const forkBoilerplate = ForkTag + `
You are a forked worker: a copy of the agent above, started to carry out one directive while the original continues. You are not the main agent and nobody will read your messages except your final report.
- Do not converse, ask questions or suggest next steps. Act.
- Use your tools directly. Do not write text between tool calls.
- Stay strictly within your directive; leave everything else to the main agent.
- If you change files, commit your changes and list the commit hashes in your report.
- The tool calls above were started by the main agent, not by you; their results are not yours to wait for.
- End with a report of at most 500 words that begins with "Scope:" (what you were asked to do), then what you did, what you found, and what is left.
</fork-boilerplate>

`

// forkPlaceholder answers every tool call of the parent's last message in a
// fork's history. It is identical for every call and every sibling.
const forkPlaceholder = "Started by the main agent; it handles this result."

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

// gateFor returns the gate of the parent message that holds toolUseID, and
// whether the caller is the first fork of that message.
func (rt *Runtime) gateFor(key string) (*forkGate, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.forks == nil {
		rt.forks = map[string]*forkGate{}
	}
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

// isFork reports whether a is a fork child, by flag or by its history.
func isFork(a *Agent) bool {
	if a.Fork {
		return true
	}
	eng := a.Engine()
	if eng == nil {
		return false
	}
	for _, m := range eng.History() {
		if m.Role == llm.RoleUser && strings.Contains(m.TextContent(), ForkTag) {
			return true
		}
	}
	return false
}

// BuildForkedMessages returns a fork's history: the parent's request
// messages, the parent's assistant message with all its tool calls, and one
// user message answering each call with the same placeholder, followed by
// the boilerplate and the directive. Only the directive differs between
// siblings.
func BuildForkedMessages(base []llm.Message, assistant llm.Message, directive string) []llm.Message {
	msgs := llm.CloneMessages(base)
	msgs = append(msgs, assistant.Clone())
	var answer []llm.Block
	for _, u := range assistant.ToolUses() {
		answer = append(answer, llm.ToolResult(u.ID, forkPlaceholder, false))
	}
	answer = append(answer, llm.Text(forkBoilerplate+"Your directive: "+directive))
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: answer})
}

// forkMarkers places a fork's breakpoints: after the system prompt (whose
// prefix includes the tools), at the end of the parent's cached history, on
// the last placeholder (the end of what siblings share), and on the last
// block. Later turns of the fork use the default policy plus the shared one.
func forkMarkers(parentLen int) func(req *llm.Request) {
	return func(req *llm.Request) {
		engine.ClearCacheMarkers(req)
		if n := len(req.System); n > 0 {
			req.System[n-1].Cache = true
		} else if n := len(req.Tools); n > 0 {
			req.Tools[n-1].Cache = true
		}
		shared := parentLen + 1 // the placeholder message
		if len(req.Messages) == shared+1 {
			engine.MarkMessage(req, parentLen-1, -1)
			engine.MarkMessage(req, shared, len(req.Messages[shared].Content)-2)
		} else {
			engine.MarkMessage(req, shared, len(req.Messages[shared].Content)-2)
		}
		engine.MarkMessage(req, len(req.Messages)-1, -1)
	}
}

// spawnFork runs the fork path (ARCHITECTURE.md section 4).
func (rt *Runtime) spawnFork(ctx context.Context, parent *Agent, env *tool.Env, in Input) (tool.Result, error) {
	if isFork(parent) {
		return tool.Errorf("A fork cannot fork: you are a forked worker. Do the work of your directive yourself."), nil
	}
	depth := parent.Depth + 1
	if depth > rt.cfg.MaxDepth {
		return tool.Errorf("Cannot fork: the nesting limit of %d levels is reached. Do this part of the work yourself.", rt.cfg.MaxDepth), nil
	}
	peng := parent.Engine()
	base := peng.LastRequest()
	hist := peng.History()
	if base == nil || len(hist) == 0 || hist[len(hist)-1].Role != llm.RoleAssistant {
		return tool.Errorf("Cannot fork here: there is no assistant turn to fork from."), nil
	}
	assistant := hist[len(hist)-1]
	if !slices.ContainsFunc(assistant.ToolUses(), func(b llm.Block) bool { return b.ID == env.ToolUseID }) {
		return tool.Errorf("Cannot fork: this call is not part of the agent's latest message."), nil
	}
	child := &Agent{
		ID: newAgentID(), Name: in.Name, Type: "fork", Def: parent.Def, Role: agent.RoleBackground,
		Depth: depth, Model: base.Model, Mode: parent.Mode, Cwd: parent.Cwd, ParentID: parent.ID,
		Fork: true, Queue: task.NewQueue(), ToolUseID: env.ToolUseID,
	}
	ws, bad := rt.isolate(ctx, child, env, in)
	if bad != nil {
		return *bad, nil
	}
	parent.mu.Lock()
	tools := slices.Clone(parent.tools)
	parent.mu.Unlock()
	child.tools = tools
	history := BuildForkedMessages(base.Messages, assistant, ws.directive(in.Prompt))
	cfg := engine.Config{
		Model: rt.cfg.Model, ModelName: base.Model, System: base.System, Tools: tools,
		MaxTokens: base.MaxTokens, Thinking: base.Thinking, Effort: base.Effort,
		Prices: rt.cfg.Prices, Compaction: rt.cfg.Compaction, Inbox: queueInbox{child.Queue},
		Sink: rt.cfg.Sink, Now: rt.cfg.Now, History: history, Background: true,
		ParentToolUseID: env.ToolUseID, MaxTurns: rt.cfg.MaxTurns,
		CacheMarkers: forkMarkers(len(base.Messages)),
		Env: tool.Env{Cwd: child.Cwd, AgentID: child.ID, AgentName: child.Name, SessionID: rt.cfg.SessionID,
			Depth: depth, Files: env.Files.Clone()},
	}
	p := &plan{cfg: cfg}
	ws.apply(&p.cfg)
	if rt.cfg.Gates != nil {
		p.cfg.Gate = rt.cfg.Gates(child)
	}
	if rt.cfg.Hooks != nil {
		p.cfg.Hooks = rt.cfg.Hooks(child)
	}
	if err := rt.openTranscript(p, child); err != nil {
		ws.abandon(ctx)
		return tool.Errorf("Could not prepare the fork: %v", err), nil
	}
	gate, first := rt.gateFor(parent.ID + "/" + assistantKey(assistant))
	spec := task.Spec{ID: child.ID, Kind: task.KindLocalAgent, Description: in.Description, Prompt: in.Prompt,
		SubagentType: "fork", AgentID: child.ID, Name: in.Name, ToolUseID: env.ToolUseID,
		ParentAgentID: parent.ID, Queue: parent.Queue, Background: true, Transcript: p.transcript}
	rt.register(child)
	t, err := rt.cfg.Tasks.Start(ctx, spec, ws.wrap(rt.forkRun(child, p, history, gate, first)))
	if err != nil {
		gate.release()
		p.close()
		ws.abandon(ctx)
		return tool.Errorf("Could not start the fork: %v", err), nil
	}
	return asyncLaunched(child, in, t.State().OutputFile), nil
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

// forkRun is a fork's task body: record the inherited history, wait for the
// first sibling's first token (unless it is the first), then run.
func (rt *Runtime) forkRun(child *Agent, p *plan, history []llm.Message, gate *forkGate, first bool) task.RunFunc {
	return func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		defer p.close()
		if first {
			defer gate.release() // also when it fails before its first token
		} else {
			select {
			case <-gate.first:
			case <-ctx.Done():
				return task.Outcome{}, ctx.Err()
			case <-time.After(forkWait):
			}
		}
		if err := rt.acquire(ctx, t); err != nil {
			return task.Outcome{}, err
		}
		defer rt.release()
		if rec := p.cfg.Recorder; rec != nil {
			for i := range history {
				m := history[i]
				typ := session.TypeUser
				if m.Role == llm.RoleAssistant {
					typ = session.TypeAssistant
				}
				if err := rec.Append(session.Entry{Type: typ, Message: &m, Origin: "fork_context"}); err != nil {
					return task.Outcome{}, err
				}
			}
		}
		cfg := p.cfg
		sink := taskSink(t, cfg.Sink)
		if first {
			sink = releaseOnFirstToken(gate, sink)
		}
		cfg.Sink = sink
		eng := engine.New(cfg)
		child.mu.Lock()
		child.engine = eng
		child.mu.Unlock()
		res, err := eng.Send(ctx, nil, "")
		res, err = rt.settle(ctx, eng, child.Queue, res, err)
		child.setResult(res)
		if err != nil {
			return task.Outcome{}, err
		}
		return task.Outcome{Text: outcomeText(res), TotalTokens: res.Usage.Total(), ToolUses: res.ToolUses}, nil
	}
}

// releaseOnFirstToken opens the gate when the first streamed event arrives:
// the response has begun, so the prefix written to the cache is readable.
func releaseOnFirstToken(g *forkGate, next engine.Sink) engine.Sink {
	return func(ev engine.Event) {
		if ev.Kind == engine.EventStream || ev.Kind == engine.EventAssistant {
			g.release()
		}
		next(ev)
	}
}
