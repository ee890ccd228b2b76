package agenttool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/isolation"
)

// Config wires a Runtime. Model, Catalog, Tasks and Cwd are required.
type Config struct {
	// Model serves every model id the session uses.
	Model   llm.Model
	Aliases map[string]string // alias → model id (agent.DefaultAliases)
	Catalog *agent.Catalog
	Flags   *flags.Set
	// Tools are every tool but Agent, in canonical order; the runtime adds
	// the Agent tool in front.
	Tools []tool.Tool
	Tasks *task.Registry

	// Gates builds the permission gate of an agent; nil allows everything.
	Gates func(a *Agent) engine.Gate
	// Hooks builds the hook runner of an agent; nil runs none.
	Hooks func(a *Agent) engine.Hooks
	// Transcripts opens an agent's transcript; nil keeps none.
	Transcripts func(a *Agent) (engine.Recorder, func() error, error)
	// Sink receives every agent's events.
	Sink engine.Sink
	// Teammates spawns named team members (Agent with team_name and name);
	// nil means teams are not available.
	Teammates TeammateSpawner
	// Worktrees leases git worktrees to agents (isolation "worktree",
	// EnterWorktree); nil makes isolation an is_error result.
	Worktrees *isolation.Workspaces

	MaxDepth      int // default 3
	MaxConcurrent int // default 32
	// MaxTurns bounds each subagent's turns when its definition sets none
	// (0: no bound).
	MaxTurns int
	// Deadline bounds each subagent's wall-clock time (0: none).
	Deadline time.Duration

	SessionID string
	Cwd       string
	// Environment is the base environment (platform, date, OS); per-agent
	// fields (cwd, model, tools) are filled in for each agent.
	Environment prompt.Environment
	Memory      []prompt.MemoryFile
	GitSnapshot string
	// Proactive appends agent prompts to the default prompt instead of
	// replacing it.
	Proactive bool

	Getenv     func(string) string
	Prices     llm.PriceTable
	Compaction engine.Compaction
	// ReadOnly classifies tools for plan-mode pools.
	ReadOnly func(name string) bool
	Now      func() time.Time
}

// Runtime holds what every agent of a session shares. Safe for concurrent
// use.
type Runtime struct {
	cfg   Config
	sem   chan struct{}
	agent *Tool

	mu     sync.Mutex
	agents map[string]*Agent
	forks  map[string]*forkGate // fan-out gates by parent message
}

// Agent is one agent of the session, running or finished.
type Agent struct {
	ID       string
	Name     string // SendMessage address, if any
	Team     string // the team it is a member of, if any
	Type     string // definition name; empty for a lead without one
	Def      *agent.Definition
	Role     agent.Role
	Depth    int
	Model    string
	Mode     string // permission mode
	Cwd      string
	ParentID string
	// Fork is true for a fork child (the recursion guard's context flag).
	Fork bool
	// Queue receives notifications and messages for this agent.
	Queue *task.Queue
	// ToolUseID is the Agent call that spawned it.
	ToolUseID string
	// Worktree is the worktree the agent is confined to, if any.
	Worktree string

	mu     sync.Mutex
	engine *engine.Agent
	tools  []tool.Tool
	result *engine.Result
}

// Engine returns the agent's engine (nil before it starts).
func (a *Agent) Engine() *engine.Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.engine
}

// ToolNames lists the agent's pool.
func (a *Agent) ToolNames() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	names := make([]string, len(a.tools))
	for i, t := range a.tools {
		names[i] = t.Def().Name
	}
	return names
}

// New returns a Runtime.
func New(cfg Config) (*Runtime, error) {
	switch {
	case cfg.Model == nil:
		return nil, errors.New("agenttool: Config.Model is required")
	case cfg.Catalog == nil:
		return nil, errors.New("agenttool: Config.Catalog is required")
	case cfg.Tasks == nil:
		return nil, errors.New("agenttool: Config.Tasks is required")
	case cfg.Cwd == "":
		return nil, errors.New("agenttool: Config.Cwd is required")
	}
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = 3
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 32
	}
	if cfg.Aliases == nil {
		cfg.Aliases = agent.DefaultAliases()
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ReadOnly == nil {
		cfg.ReadOnly = func(string) bool { return false }
	}
	rt := &Runtime{cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrent), agents: map[string]*Agent{}}
	rt.agent = &Tool{rt: rt}
	return rt, nil
}

// AllTools returns the Agent tool followed by the configured tools: the
// universe every pool is cut from.
func (rt *Runtime) AllTools() []tool.Tool {
	return append([]tool.Tool{rt.agent}, rt.cfg.Tools...)
}

// Lookup returns the agent with id.
func (rt *Runtime) Lookup(id string) (*Agent, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	a, ok := rt.agents[id]
	return a, ok
}

func (rt *Runtime) register(a *Agent) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.agents[a.ID] = a
}

// acquire takes a concurrency slot, waiting (queued) while all are busy.
func (rt *Runtime) acquire(ctx context.Context, t *task.Task) error {
	select {
	case rt.sem <- struct{}{}:
		return nil
	default:
	}
	if t != nil {
		t.SetPhase("queued")
	}
	select {
	case rt.sem <- struct{}{}:
		if t != nil {
			t.SetPhase("running")
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (rt *Runtime) release() { <-rt.sem }

// NewAgentID returns a fresh agent id: "a" and 16 hex digits.
func NewAgentID() string { return newAgentID() }

// newAgentID returns a fresh agent id: "a" and 16 hex digits.
func newAgentID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "a" + hex.EncodeToString(b[:])
}

// modelFor resolves a model id through the aliases.
func (rt *Runtime) modelFor(m string) string { return agent.ResolveAlias(m, rt.cfg.Aliases) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TeammateSpawner runs the teammate path of the Agent tool (the swarm
// package implements it). Safe for concurrent use.
type TeammateSpawner interface {
	SpawnTeammate(ctx context.Context, parent *Agent, env *tool.Env, in Input) (tool.Result, error)
}

// Catalog returns the session's agent definitions.
func (rt *Runtime) Catalog() *agent.Catalog { return rt.cfg.Catalog }

// Tasks returns the session's task registry.
func (rt *Runtime) Tasks() *task.Registry { return rt.cfg.Tasks }

// Cwd returns the session's working directory.
func (rt *Runtime) Cwd() string { return rt.cfg.Cwd }

// LookupName returns a running agent with the given name, if any.
func (rt *Runtime) LookupName(name string) (*Agent, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, a := range rt.agents {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}
