package agenttool

import (
	"context"
	"slices"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// plan is everything needed to start an agent's engine.
type plan struct {
	cfg     engine.Config
	opening []llm.Block // blocks that open the first user message
	closers []func() error
	// transcript is the path of the agent's transcript file, when its
	// recorder writes one: its task's output file links to it.
	transcript string
}

func (p *plan) close() {
	for _, c := range slices.Backward(p.closers) {
		_ = c()
	}
}

// slim reports whether a's definition runs without memory files and the git
// snapshot (read-only built-ins under slim_subagent_memory).
func (rt *Runtime) slim(a *Agent) bool {
	return a.Depth > 0 && a.Def != nil && a.Def.BuiltIn && a.Def.ReadOnly &&
		rt.flags().Bool(flags.SlimSubagentMemory)
}

func (rt *Runtime) flags() *flags.Set { return rt.cfg.Flags }

// pool cuts a's tool pool from the runtime's tools.
func (rt *Runtime) pool(a *Agent) []tool.Tool {
	tools, _ := agent.PoolTools(rt.AllTools(), agent.PoolInput{
		Role:        a.Role,
		Def:         a.Def,
		Depth:       a.Depth,
		MaxDepth:    rt.cfg.MaxDepth,
		PlanMode:    a.Mode == agent.ModePlan,
		ReadOnly:    rt.cfg.ReadOnly,
		Coordinator: a.Role == agent.RoleMain && rt.flags().Bool(flags.CoordinatorMode),
	})
	return tools
}

// environment renders a's environment details.
func (rt *Runtime) environment(a *Agent, tools []tool.Tool) prompt.Environment {
	env := rt.cfg.Environment
	env.Cwd = a.Cwd
	env.Worktree = a.Worktree
	env.Model = a.Model
	env.Tools = nil
	for _, t := range tools {
		env.Tools = append(env.Tools, t.Def().Name)
	}
	return env
}

// buildPlan assembles a's engine config. chain holds the prompt candidates
// other than the definition's (which buildPlan fills in).
func (rt *Runtime) buildPlan(a *Agent, chain prompt.Chain, system []llm.Block) (*plan, error) {
	tools := rt.pool(a)
	a.mu.Lock()
	a.tools = tools
	a.mu.Unlock()
	if a.Def != nil {
		chain.Agent = a.Def.Prompt
		chain.Proactive = rt.cfg.Proactive
	}
	git := rt.cfg.GitSnapshot
	switch {
	case rt.slim(a):
		git = ""
	case git != "" && a.Worktree != "" && system == nil:
		// The session's snapshot describes the main checkout (its branch,
		// its uncommitted files); an agent confined to a worktree is told
		// about the worktree it works in instead. (A fork keeps its
		// parent's bytes: system is already set.)
		git = prompt.GitSnapshot(context.Background(), a.Worktree)
	}
	if system == nil {
		system = prompt.System(chain, rt.environment(a, tools), git)
	}
	p := &plan{cfg: engine.Config{
		Model:      rt.cfg.Model,
		ModelName:  a.Model,
		System:     system,
		Tools:      tools,
		Prices:     rt.cfg.Prices,
		Compaction: rt.cfg.Compaction,
		Inbox:      queueInbox{a.Queue},
		Sink:       rt.cfg.Sink,
		Now:        rt.cfg.Now,
		Env: tool.Env{
			Cwd:       a.Cwd,
			AgentID:   a.ID,
			AgentName: a.Name,
			SessionID: rt.cfg.SessionID,
			Depth:     a.Depth,
		},
	}}
	if a.Def != nil {
		p.cfg.MaxTurns = a.Def.MaxTurns
		p.cfg.Effort = a.Def.EffortFor("")
	}
	if !rt.slim(a) {
		if b, ok := prompt.UserContext(rt.cfg.Memory, rt.agentListAttachment(tools)); ok {
			p.opening = append(p.opening, b)
		}
	}
	if rt.cfg.Gates != nil {
		p.cfg.Gate = rt.cfg.Gates(a)
	}
	if rt.cfg.Hooks != nil {
		p.cfg.Hooks = rt.cfg.Hooks(a)
	}
	if err := rt.openTranscript(p, a); err != nil {
		return nil, err
	}
	return p, nil
}

// openTranscript opens a's transcript (Config.Transcripts) as p's recorder.
func (rt *Runtime) openTranscript(p *plan, a *Agent) error {
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

// queueInbox feeds an agent's task queue to its engine at tool-result
// boundaries.
type queueInbox struct{ q *task.Queue }

func (qi queueInbox) Drain() []llm.Block {
	if qi.q == nil {
		return nil
	}
	items := qi.q.Drain()
	if len(items) == 0 {
		return nil
	}
	out := make([]llm.Block, 0, len(items))
	for _, it := range items {
		out = append(out, llm.Text(it.ModelText()))
	}
	return out
}

// agentListAttachment is the list of agent types for the first user
// message, when the agent_list_attachment flag moves it there (so adding an
// agent type changes no cached tool description). Empty when the flag is
// off or the agent cannot spawn agents.
func (rt *Runtime) agentListAttachment(tools []tool.Tool) string {
	if !rt.flags().Bool(flags.AgentListAttachment) {
		return ""
	}
	for _, t := range tools {
		if t.Def().Name == Name {
			return AgentList(rt.cfg.Catalog)
		}
	}
	return ""
}
