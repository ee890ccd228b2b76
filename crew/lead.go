package crew

import (
	"context"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// LeadConfig describes the session's main agent.
type LeadConfig struct {
	// Model is the model id or alias.
	Model string
	// Mode is the lead's permission mode when the session has no
	// permission checker; otherwise the checker's mode is the lead's.
	Mode permission.Mode
	// Def is the definition chosen with --agent, if any.
	Def *agentdef.Definition
	// Chain carries --system-prompt, --append-system-prompt and overrides.
	Chain prompt.Chain
	// System, when set, is the recorded system prompt of a resumed session;
	// it is reused byte for byte instead of being rendered again.
	System []llm.Block
	// History seeds a resumed conversation.
	History []llm.Message

	MaxTurns int
	Thinking *llm.Thinking
	Effort   string
	// Recorder, when set, replaces the runtime's transcript factory.
	Recorder engine.Recorder
}

// NewLead builds the session's main agent (depth 0): its id, queue and
// engine are made here, like every other agent's. Its permission state is
// the session's (Config.Permissions) and its mode that checker's.
func (rt *Crew) NewLead(ctx context.Context, cfg LeadConfig) (*Agent, error) {
	info := tool.Caller{ID: NewAgentID(), Kind: tool.KindLead, Model: rt.modelFor(cfg.Model), Cwd: rt.cfg.Cwd,
		Mode: cfg.Mode}
	if rt.cfg.Permissions != nil {
		info.Mode = rt.cfg.Permissions.Mode()
	}
	if info.Mode == "" {
		info.Mode = permission.ModeDefault
	}
	if cfg.Def != nil {
		info.Type = cfg.Def.Name
		if cfg.Model == "" && cfg.Def.Model != "" && cfg.Def.Model != "inherit" {
			info.Model = rt.modelFor(cfg.Def.Model)
		}
	}
	a := &Agent{rt: rt, def: cfg.Def, role: agentdef.RoleMain, queue: task.NewQueue(), info: info,
		checker: rt.cfg.Permissions, prompter: rt.cfg.Prompter}
	chain := cfg.Chain
	if rt.flags().Bool(flags.CoordinatorMode) && chain.Coordinator == "" {
		chain.Coordinator = CoordinatorPrompt
	}
	p, err := rt.buildPlan(ctx, a, planInput{chain: chain, system: cfg.System, history: cfg.History})
	if err != nil {
		return nil, err
	}
	p.cfg.MaxTurns = cfg.MaxTurns
	p.cfg.Thinking = cfg.Thinking
	if cfg.Effort != "" {
		p.cfg.Effort = cfg.Effort
	}
	if cfg.Recorder != nil {
		p.cfg.Recorder = cfg.Recorder
	}
	a.adopt(p)
	rt.register(a)
	return a, nil
}

// adopt starts a's engine from p and makes a own what p opened (released by
// a.Close).
func (a *Agent) adopt(p *setup) {
	a.start(p.cfg)
	a.mu.Lock()
	a.system = p.cfg.System
	a.closers = append(a.closers, p.closers...)
	a.mu.Unlock()
	p.closers = nil
}

// System returns the agent's rendered system prompt (the lead records it at
// session start).
func (a *Agent) System() []llm.Block {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.system
}
