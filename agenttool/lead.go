package agenttool

import (
	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
)

// LeadConfig describes the session's main agent.
type LeadConfig struct {
	// ID is the lead's agent id (default: a new one).
	ID string
	// Model is the model id or alias.
	Model string
	// Mode is the permission mode.
	Mode string
	// Def is the definition chosen with --agent, if any.
	Def *agent.Definition
	// Chain carries --system-prompt, --append-system-prompt and overrides.
	Chain prompt.Chain
	// System, when set, is the recorded system prompt of a resumed session;
	// it is reused byte for byte instead of being rendered again.
	System []llm.Block
	// History seeds a resumed conversation.
	History []llm.Message

	MaxTurns     int
	MaxBudgetUSD float64
	Thinking     *llm.Thinking
	Effort       string
	// Recorder, when set, replaces the runtime's transcript factory.
	Recorder engine.Recorder
	// Queue is the lead's notification queue (default: a new one). Tools
	// created before the lead (TaskOutput) may hold it already.
	Queue *task.Queue
}

// Lead is a started main agent.
type Lead struct {
	*Agent
	// Opening is what the first user message must start with (the memory
	// files); empty for a resumed session.
	Opening []llm.Block
	// System is the rendered system prompt (recorded at session start).
	System []llm.Block
	close  func()
}

// Close releases the lead's transcript.
func (l *Lead) Close() {
	if l.close != nil {
		l.close()
	}
}

// NewLead builds the main agent (depth 0).
func (rt *Runtime) NewLead(cfg LeadConfig) (*Lead, error) {
	id := cfg.ID
	if id == "" {
		id = newAgentID()
	}
	a := &Agent{
		ID:    id,
		Def:   cfg.Def,
		Role:  agent.RoleMain,
		Model: rt.modelFor(cfg.Model),
		Mode:  cfg.Mode,
		Cwd:   rt.cfg.Cwd,
		Queue: cfg.Queue,
	}
	if a.Queue == nil {
		a.Queue = task.NewQueue()
	}
	if cfg.Def != nil {
		a.Type = cfg.Def.Name
		if cfg.Model == "" && cfg.Def.Model != "" && cfg.Def.Model != "inherit" {
			a.Model = rt.modelFor(cfg.Def.Model)
		}
	}
	chain := cfg.Chain
	if rt.flags().Bool("coordinator_mode") && chain.Coordinator == "" {
		chain.Coordinator = CoordinatorPrompt
	}
	p, err := rt.buildPlan(a, chain, cfg.System)
	if err != nil {
		return nil, err
	}
	p.cfg.History = cfg.History
	p.cfg.MaxTurns = cfg.MaxTurns
	p.cfg.MaxBudgetUSD = cfg.MaxBudgetUSD
	p.cfg.Thinking = cfg.Thinking
	if cfg.Effort != "" {
		p.cfg.Effort = cfg.Effort
	}
	if cfg.Recorder != nil {
		p.cfg.Recorder = cfg.Recorder
	}
	a.engine = engine.New(p.cfg)
	rt.register(a)
	l := &Lead{Agent: a, System: p.cfg.System, close: p.close}
	if len(cfg.History) == 0 {
		l.Opening = p.opening
	}
	return l, nil
}
