package crew

import (
	"context"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/fork"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/toolsearch"
	"github.com/cohort-dev/cohort/transcript"
)

// setup is everything needed to start an agent's engine.
type setup struct {
	cfg engine.Config
	// transcript is the path of the agent's transcript file, when its
	// recorder writes one: its task's output file links to it.
	transcript string
	// closers release what the plan opened (the transcript).
	closers []func() error
}

// close releases what p opened; a nil plan has nothing to release.
func (p *setup) close() {
	if p == nil {
		return
	}
	for _, c := range slices.Backward(p.closers) {
		_ = c()
	}
	p.closers = nil
}

// planInput is what differs between the kinds of agent a plan is made for;
// the rest comes from the agent's record, definition and the runtime.
type planInput struct {
	// chain holds the prompt candidates other than the definition's (which
	// buildPlan fills in).
	chain prompt.Chain
	// system, when set, is reused byte for byte instead of being rendered:
	// a resumed lead's recorded prompt.
	system []llm.Block
	// parent, when set, makes a fork of the agent that sent it: the child's
	// request is the parent's, byte for byte (system prompt, tools, model,
	// thinking, effort), and history its forked conversation.
	parent  *llm.Request
	tools   []tool.Tool
	history []llm.Message
	// inbox replaces the agent's queue inbox (an AgentSpec's).
	inbox engine.Inbox
}

// slim reports whether a's definition runs without memory files and the git
// snapshot (read-only built-ins under slim_subagent_memory).
func (rt *Crew) slim(a *Agent) bool {
	return a.info.Depth > 0 && a.def != nil && a.def.BuiltIn && a.def.ReadOnly &&
		rt.flags().Bool(flags.SlimSubagentMemory)
}

// pool cuts a's tool pool from the runtime's tools, and says why a lacks
// each of the others (what the model reads when it calls one).
func (rt *Crew) pool(a *Agent) ([]tool.Tool, map[string]string) {
	info := a.Info()
	a.mu.Lock()
	own := a.own
	a.mu.Unlock()
	all := rt.universe()
	var ownNames []string
	if len(own) > 0 {
		all = append(slices.Clip(all), own...)
		for _, t := range own {
			ownNames = append(ownNames, t.Def().Name)
		}
	}
	in := agentdef.PoolInput{
		Role:        a.role,
		Def:         a.def,
		Depth:       info.Depth,
		MaxDepth:    rt.cfg.MaxDepth,
		PlanMode:    info.Mode == permission.ModePlan,
		Isolated:    info.Worktree != "",
		ReadOnly:    rt.cfg.ReadOnly,
		Coordinator: a.role == agentdef.RoleMain && rt.flags().Bool(flags.CoordinatorMode),
		OwnMCP:      ownNames,
	}
	tools, _ := agentdef.PoolTools(all, in)
	defs := make([]llm.ToolDef, len(tools))
	for i, t := range tools {
		defs[i] = t.Def()
	}
	in.MCPOnDemand = agentdef.MCPOnDemand(defs)
	return toolsearch.Offer(tools, in.OnDemand), agentdef.Excluded(toolNames(all), in)
}

// forkWithheld is what a fork may not call of its parent's tool array,
// which it keeps byte for byte (the shared cache prefix): what no
// subagent gets — starting agents, a team's tools, the lead's own.
func forkWithheld(tools []tool.Tool) map[string]string {
	out := map[string]string{}
	for name := range agentdef.Excluded(toolNames(tools), agentdef.PoolInput{Role: agentdef.RoleSubagent, Depth: 1, MaxDepth: 1}) {
		if agentdef.NamedOnly(name) {
			continue // a subagent lacks them to keep its array short; a fork's is its parent's
		}
		out[name] = "a forked worker starts no agents, works in no team and has none of the main agent's own tools; do the work of your directive yourself"
	}
	return out
}

func toolNames(ts []tool.Tool) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Def().Name
	}
	return names
}

// environment renders a's environment details. Its tools are those the
// model can call now: a tool offered on demand (package toolsearch) is
// listed in ToolSearch's description, as one to load first, not here.
func (rt *Crew) environment(info tool.Caller, tools []tool.Tool) prompt.Environment {
	env := rt.cfg.Environment
	env.Cwd = info.Cwd
	env.Worktree = info.Worktree
	env.Model = info.Model
	env.Tools = nil
	for _, t := range tools {
		if def := t.Def(); !def.Defer {
			env.Tools = append(env.Tools, def.Name)
		}
	}
	return env
}

// buildPlan assembles a's engine config — for every kind of agent, forks
// included — and opens its transcript (released by the plan's close). It
// sets a's pool and opening.
func (rt *Crew) buildPlan(ctx context.Context, a *Agent, in planInput) (*setup, error) {
	info := a.Info()
	var extras Extras
	if in.parent == nil && rt.cfg.Extras != nil {
		extras = rt.cfg.Extras(ctx, a)
		a.mu.Lock()
		a.own = extras.Tools
		a.mu.Unlock()
	}
	tools, lacking := in.tools, map[string]string(nil)
	var withheld map[string]string
	if in.parent == nil {
		tools, lacking = rt.pool(a)
	} else {
		withheld = forkWithheld(tools)
	}
	p := &setup{cfg: engine.Config{
		Model:      rt.cfg.Model,
		ModelName:  info.Model,
		Tools:      tools,
		Withheld:   withheld,
		Lacking:    lacking,
		Prices:     rt.cfg.Prices,
		Compaction: rt.cfg.Compaction,
		Inbox:      queueInbox{a.queue},
		Sink:       rt.cfg.Sink,
		Now:        rt.cfg.Now,
		History:    in.history,
		Env:        tool.Env{Caller: info, SessionID: rt.cfg.SessionID, Guard: a.guard, Access: a.access(), Bounds: rt.cfg.Bounds},
		// A spawned agent's events carry the call that spawned it.
		ParentToolUseID: info.ParentToolUseID,
		Background:      a.role == agentdef.RoleBackground,
	}}
	if extras.Close != nil {
		p.closers = append(p.closers, func() error { extras.Close(); return nil })
	}
	var opening []llm.Block
	if parent := in.parent; parent != nil {
		p.cfg.ModelName, p.cfg.System = parent.Model, parent.System
		p.cfg.MaxTokens, p.cfg.Thinking, p.cfg.Effort = parent.MaxTokens, parent.Thinking, parent.Effort
		p.cfg.CacheMarkers = fork.Markers(len(parent.Messages))
	} else {
		p.cfg.CacheMarkers = sharedToolPrefix(a, tools)
		p.cfg.System = rt.system(ctx, a, in, tools)
		if a.def != nil {
			p.cfg.MaxTurns = a.def.MaxTurns
			p.cfg.Effort = a.def.EffortFor("")
		}
		if a.effort != "" {
			p.cfg.Effort = a.effort
		}
		if !rt.slim(a) && in.chain.Override == "" {
			extra := []string{rt.agentListAttachment(tools)}
			if rt.cfg.AgentMemory != nil {
				extra = append(extra, rt.cfg.AgentMemory(info, a.def))
			}
			if b, ok := prompt.UserContext(rt.cfg.Memory, extra...); ok {
				opening = append(opening, b)
			}
		}
		opening = append(opening, extras.Opening...)
	}
	if info.Depth > 0 && p.cfg.MaxTurns == 0 {
		p.cfg.MaxTurns = rt.cfg.MaxTurns
	}
	p.cfg.Budget = rt.account(a)
	if rt.cfg.Hooks != nil {
		p.cfg.Hooks = rt.cfg.Hooks(a)
	}
	p.cfg.Gate = rt.gateFor(a, p.cfg.Hooks)
	p.cfg.Reopen = func(ctx context.Context, trigger string) (before, after []llm.Block) {
		if rt.cfg.Reopened != nil {
			after = rt.cfg.Reopened(ctx, a, trigger)
		}
		return a.Opening(), after
	}
	if in.inbox != nil {
		p.cfg.Inbox = in.inbox
	}
	a.mu.Lock()
	a.hooks = p.cfg.Hooks
	a.tools = tools
	a.planPool = in.parent == nil && info.Mode == permission.ModePlan
	// Kept for a conversation that continues a recorded one too: its
	// history holds the opening already, but a compaction, a clear or a
	// rewind to its start opens it again with this (issue 38).
	a.opening = opening
	a.mu.Unlock()
	if err := rt.openTranscript(p, a); err != nil {
		return nil, err
	}
	return p, nil
}

// system renders a's system prompt, or reuses the recorded one.
func (rt *Crew) system(ctx context.Context, a *Agent, in planInput, tools []tool.Tool) []llm.Block {
	if in.system != nil {
		return in.system
	}
	chain := in.chain
	if a.def != nil {
		chain.Agent = a.def.Prompt
		chain.Proactive = rt.cfg.Proactive
	}
	switch a.role {
	case agentdef.RoleSubagent:
		chain.Append = joinPrompt(chain.Append, prompt.SubagentRole)
	case agentdef.RoleBackground:
		chain.Append = joinPrompt(chain.Append, prompt.BackgroundRole)
	}
	info := a.Info()
	git := rt.cfg.GitSnapshot
	switch {
	case rt.slim(a):
		git = ""
	case git != "" && info.Worktree != "":
		// The session's snapshot describes the main checkout (its branch,
		// its uncommitted files); an agent confined to a worktree is told
		// about the worktree it works in instead.
		git = rt.worktreeSnapshot(ctx, info.Worktree)
	}
	return prompt.System(chain, rt.environment(info, tools), git)
}

// joinPrompt puts two prompt sections one after the other.
func joinPrompt(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

// openTranscript opens a's transcript (Config.Transcripts) as p's recorder.
func (rt *Crew) openTranscript(p *setup, a *Agent) error {
	if rt.cfg.Transcripts == nil {
		return nil
	}
	rec, closeFn, err := rt.cfg.Transcripts(a)
	if err != nil {
		return err
	}
	p.cfg.Recorder = rec
	if closeFn != nil {
		p.closers = append(p.closers, closeFn)
	}
	if f, ok := rec.(interface{ Path() string }); ok {
		p.transcript = f.Path()
	}
	return nil
}

// start creates a's engine from p.
func (a *Agent) start(cfg engine.Config) *engine.Conversation {
	eng := engine.New(cfg)
	a.mu.Lock()
	a.engine, a.evicted = eng, false
	a.mu.Unlock()
	return eng
}

// queueInbox feeds an agent's task queue to its engine at tool-result
// boundaries.
type queueInbox struct{ q *task.Queue }

func (qi queueInbox) Drain() []llm.Block {
	var out []llm.Block
	for _, p := range qi.DrainParts() {
		out = append(out, p.Content...)
		p.Recorded()
	}
	return out
}

// DrainParts takes what waits, each item a part with its origin: a user
// prompt as the user's, a teammate's message with its sender, a task
// notification as one.
func (qi queueInbox) DrainParts() []engine.Part {
	if qi.q == nil {
		return nil
	}
	return QueueParts(qi.q.Take())
}

// QueueParts turns queue items taken from a task.Queue into engine parts
// with their origins; each item is acknowledged when its part is recorded.
func QueueParts(items []task.Item) []engine.Part {
	if len(items) == 0 {
		return nil
	}
	out := make([]engine.Part, 0, len(items))
	for _, it := range items {
		p := engine.Part{Content: []llm.Block{llm.Text(it.ModelText())}, Recorded: it.Ack}
		switch it.Kind {
		case task.ItemUserPrompt:
			p.Content = []llm.Block{llm.Text(typedAhead(it.Text))}
		case task.ItemTeammateMessage:
			p.Origin, p.From = transcript.OriginTeammate, it.From
		case task.ItemNotification:
			p.Origin = transcript.OriginNotification
		}
		out = append(out, p)
	}
	return out
}

// typedAhead frames a text the user typed while the agent worked, so the
// model reads it as the user's message sent during its turn and not as
// more of the tool results it follows.
func typedAhead(text string) string {
	return "The user sent this message during your turn (it is theirs, not a tool's output); read it and take it into account before you go on:\n<user-message>\n" +
		strings.TrimSpace(text) + "\n</user-message>"
}

// inboxes drains several inboxes in order (a teammate's mailbox chat, then
// its own tasks' notifications).
type inboxes []engine.Inbox

func (ins inboxes) DrainParts() []engine.Part {
	var out []engine.Part
	for _, in := range ins {
		if p, ok := in.(engine.PartsInbox); ok {
			out = append(out, p.DrainParts()...)
		} else if blocks := in.Drain(); len(blocks) > 0 {
			out = append(out, engine.Part{Content: blocks, Origin: transcript.OriginSystem})
		}
	}
	return out
}

func (ins inboxes) Drain() []llm.Block {
	var out []llm.Block
	for _, in := range ins {
		out = append(out, in.Drain()...)
	}
	return out
}

// agentListAttachment is the list of agent types for the first user
// message, when the agent_list_attachment flag moves it there (so adding an
// agent type changes no cached tool description). Empty when the flag is
// off or the agent cannot spawn agents.
func (rt *Crew) agentListAttachment(tools []tool.Tool) string {
	if !rt.flags().Bool(flags.AgentListAttachment) {
		return ""
	}
	if slices.ContainsFunc(tools, func(t tool.Tool) bool { return t.Def().Name == AgentToolName }) {
		return AgentList(rt.cfg.Catalog)
	}
	return ""
}
