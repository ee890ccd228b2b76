package agenttool

import (
	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// AgentSpec describes an agent that another package runs itself (a
// teammate): the runtime builds it like any other agent.
type AgentSpec struct {
	ID    string // default: a new id
	Name  string
	Team  string
	Def   *agent.Definition
	Role  agent.Role
	Depth int
	// Model is an id or alias; empty means the definition's, else Parent's.
	Model       string
	ParentModel string
	Mode        string
	Cwd         string // default: the session's
	ParentID    string
	Queue       *task.Queue // default: a new one
	// Chain adds to the system prompt (e.g. Append for a teammate's role).
	Chain prompt.Chain
	// Gate replaces the runtime's gate factory for this agent.
	Gate engine.Gate
	// Inbox replaces the agent's queue as the engine's inbox.
	Inbox engine.Inbox
}

// Built is an agent ready to start: its engine config and the blocks that
// open its first user message.
type Built struct {
	Agent   *Agent
	Config  engine.Config
	Opening []llm.Block
	p       *plan
}

// Close releases what Build opened (the transcript).
func (b *Built) Close() { b.p.close() }

// Build prepares an agent from spec. The caller starts it with Start and
// closes it when done.
func (rt *Runtime) Build(spec AgentSpec) (*Built, error) {
	a := &Agent{ID: spec.ID, Name: spec.Name, Team: spec.Team, Def: spec.Def, Role: spec.Role,
		Depth: spec.Depth, Mode: spec.Mode, Cwd: spec.Cwd, ParentID: spec.ParentID, Queue: spec.Queue}
	if a.ID == "" {
		a.ID = newAgentID()
	}
	if a.Cwd == "" {
		a.Cwd = rt.cfg.Cwd
	}
	if a.Queue == nil {
		a.Queue = task.NewQueue()
	}
	defModel := ""
	if spec.Def != nil {
		a.Type = spec.Def.Name
		defModel = spec.Def.Model
	}
	a.Model = agent.ResolveModel(rt.cfg.Getenv, spec.Model, defModel, spec.ParentModel, rt.cfg.Aliases)
	p, err := rt.buildPlan(a, spec.Chain, nil)
	if err != nil {
		return nil, err
	}
	p.cfg.Env.Team = spec.Team
	if spec.Gate != nil {
		p.cfg.Gate = spec.Gate
	}
	if spec.Inbox != nil {
		p.cfg.Inbox = spec.Inbox
	}
	rt.register(a)
	return &Built{Agent: a, Config: p.cfg, Opening: p.opening, p: p}, nil
}

// Start creates b's engine with cfg (b.Config, possibly adjusted) and makes
// it the agent's engine.
func (rt *Runtime) Start(b *Built, cfg engine.Config) *engine.Agent {
	eng := engine.New(cfg)
	b.Agent.mu.Lock()
	b.Agent.engine = eng
	b.Agent.mu.Unlock()
	return eng
}

// SetTools replaces the tools an agent reports (after a plan-mode pool
// widens, say); the engine is told separately.
func (a *Agent) SetTools(tools []tool.Tool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tools = tools
}

// PoolFor computes the pool an agent with these facts would get.
func (rt *Runtime) PoolFor(a *Agent) []tool.Tool { return rt.pool(a) }
