package crew

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/worktree"
)

// Config wires a Runtime. Model, Catalog, Tasks and Cwd are required.
type Config struct {
	// Model serves every model id the session uses.
	Model   llm.Model
	Aliases map[string]string // alias → model id (agent.DefaultAliases)
	Catalog *agentdef.Catalog
	Flags   *flags.Set
	// Tools builds every tool of the session in canonical order (the order
	// is part of the cached prompt prefix), the Agent tool included
	// (package agenttool makes it). New calls it once with the runtime it
	// is building, so a tool can keep rt for its calls — the Agent tool
	// spawns through it, Bash starts background shells with it — but must
	// not start an agent before New has returned. Nil means no tools.
	Tools func(rt *Crew) []tool.Tool
	Tasks *task.Registry
	// Extras, when set, supplies what an agent's definition brings beyond
	// the session's tools: the tools of its own MCP servers (which join its
	// pool past its tools list) and blocks for its first message (preloaded
	// skills). It is called once for each plan of an agent that is not a
	// fork, before its pool is cut; Extras.Close runs when the plan is
	// released (the end of the agent's run, or the lead's Close).
	Extras func(ctx context.Context, a *Agent) Extras

	// Permissions is the session's rule state and the lead's checker; each
	// agent spawned below the lead gets a child of it in its own mode, and
	// an agent built from an AgentSpec may bring its own. Nil allows every
	// call.
	Permissions *permission.Checker
	// Bounds is the sandbox's own account of protected paths, which the
	// file tools check their writes against below the permission check
	// (tool.Env.Bounds); nil without a sandbox.
	Bounds tool.Bounds
	// Prompter answers the "ask" decisions of the session's agents (nil:
	// permission.Headless, which denies them). An agent's PermissionRequest
	// hooks answer first.
	Prompter permission.Prompter
	// NotifyPrompts fires the Notification hooks before a prompt is put to
	// a person (front ends where one answers; not print mode).
	NotifyPrompts bool
	// Hooks builds the hook runner of an agent; nil runs none. Its optional
	// capabilities (hook.SubagentHooks, hook.WorktreeHooks, …) are used
	// when the value has them.
	Hooks func(a *Agent) engine.Hooks
	// Transcripts opens an agent's transcript; nil keeps none.
	Transcripts func(a *Agent) (engine.Recorder, func() error, error)
	// Sink receives every agent's events.
	Sink engine.Sink
	// Worktrees returns the repository's worktree manager, for agents that
	// ask for isolation "worktree" and for EnterWorktree (see Workspaces).
	// Nil makes isolation an is_error result.
	Worktrees func(ctx context.Context) (*worktree.Manager, error)
	// Remote connects to the queue where remote agents run (isolation:
	// "remote"); it is called at each remote spawn and may dial on the
	// first. Nil makes isolation "remote" an is_error result.
	Remote func(ctx context.Context) (RemoteQueue, error)
	// Home expands "~" in the paths of isolated agents' Bash commands
	// (default $HOME).
	Home string

	MaxDepth      int // default 3
	MaxConcurrent int // default 32
	// MaxTurns bounds each subagent's turns when its definition sets none
	// (0: no bound).
	MaxTurns int
	// EvictAfter is how long a finished subagent or background agent
	// keeps its engine (its conversation) in memory (default
	// DefaultEvictAfter; negative: for the session). After that a message
	// to it resumes it from its transcript (evict.go). Only agents with a
	// transcript (Transcripts) are evicted.
	EvictAfter time.Duration
	// Index, when set, is the file finished agents' records move to once
	// evicted, so that they leave memory too (retire.go); a message to one
	// brings it back. Empty keeps the records in memory for the session.
	Index string
	// OnEvict, when set, is told each agent evicted.
	OnEvict func(agentID string)
	// Deadline bounds each spawned agent's wall-clock time per activation
	// (0: none).
	Deadline time.Duration

	SessionID string
	Cwd       string
	// Environment is the base environment (platform, date, OS); per-agent
	// fields (cwd, model, tools) are filled in for each agent.
	Environment prompt.Environment
	Memory      []prompt.MemoryFile
	// AgentMemory, when set, is what an agent is told about its own memory
	// directory in its first message (package memory): the project's
	// memory for the lead, a definition's for an agent whose definition
	// sets memory; "" for none. It is called once per agent, with its
	// record and definition (nil for a lead without one).
	AgentMemory func(info tool.Caller, def *agentdef.Definition) string
	GitSnapshot string
	// Proactive appends agent prompts to the default prompt instead of
	// replacing it.
	Proactive bool

	Getenv func(string) string
	Prices llm.PriceTable
	// Budget holds the spend caps: each agent gets an account below the
	// one of the agent that spawned it (a teammate, below its team's),
	// with its definition's caps (budget.go). Nil: no caps.
	Budget *budget.Ledger
	// RemoteSpent, when set, learns what each remote job's model cost on
	// its worker (the session counts it in its totals).
	RemoteSpent func(model string, u llm.Usage, costUSD float64)
	Compaction  engine.Compaction
	// Reopened, when set, is called after an agent's conversation was
	// compacted: what it returns follows the summary (the session fires
	// the lead's SessionStart hooks with source "compact" there). The
	// agent's opening goes ahead of the summary regardless.
	Reopened func(ctx context.Context, a *Agent, trigger string) []llm.Block
	// ReadOnly classifies tools for plan-mode pools.
	ReadOnly func(name string) bool
	// CheckCwd, when set, vets an Agent call's cwd (the agent_cwd flag)
	// against its parent's: an error refuses the call. The session checks
	// that the child's commands could write nothing its parent's could not,
	// and returns the cwd the child works in: the directory resolved and
	// held, which its commands and file tools reach whatever the name
	// leads to later.
	CheckCwd func(parentCwd, cwd string) (string, error)
	Now      func() time.Time
}

// Extras are what Config.Extras gives one agent.
type Extras struct {
	Tools   []tool.Tool
	Opening []llm.Block
	Close   func()
}

// Crew holds what every agent of a session shares and builds every
// agent: the lead, subagents, background agents, forks, resumed agents and
// teammates. Safe for concurrent use.
type Crew struct {
	cfg        Config
	tools      []tool.Tool // under toolsMu (refresh.go)
	toolsMu    sync.RWMutex
	sem        chan struct{}
	workspaces *worktree.Workspaces

	mu     sync.Mutex
	agents map[string]*Agent
	// named lists the agents started with each name, oldest first, so a
	// name resolves to its running agent or, for a resume, its latest.
	named map[string][]*Agent
	lead  *Agent
	seq   int
	forks map[string]*forkGate // fan-out gates by parent message
	// batches maps an Agent call's tool-use id to its message's batch
	// (siblings.go).
	batches map[string]string
	// retired sums the agents whose records went to Config.Index; indexMu
	// serialises the index's writes and recalls.
	retired RetiredTotals
	indexMu sync.Mutex
}

// New returns a Runtime, calling cfg.Tools to build its tools.
func New(cfg Config) (*Crew, error) {
	switch {
	case cfg.Model == nil:
		return nil, errors.New("runtime: Config.Model is required")
	case cfg.Catalog == nil:
		return nil, errors.New("runtime: Config.Catalog is required")
	case cfg.Tasks == nil:
		return nil, errors.New("runtime: Config.Tasks is required")
	case cfg.Cwd == "":
		return nil, errors.New("runtime: Config.Cwd is required")
	}
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = 3
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 32
	}
	if cfg.Aliases == nil {
		cfg.Aliases = agentdef.DefaultAliases()
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
	if cfg.Prompter == nil {
		cfg.Prompter = permission.Headless{}
	}
	rt := &Crew{cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrent),
		agents: map[string]*Agent{}, named: map[string][]*Agent{}, forks: map[string]*forkGate{}}
	rt.workspaces = worktree.NewWorkspaces(worktree.WorkspacesConfig{Manager: cfg.Worktrees, SessionID: cfg.SessionID,
		Home: cfg.Home, Move: rt.moveAgent, Hooks: rt.worktreeHooksOf})
	if cfg.Tools != nil {
		rt.tools = slices.Clip(cfg.Tools(rt))
	}
	return rt, nil
}

// Tools returns every tool of the session, the universe each agent's pool
// is cut from.
func (rt *Crew) Tools() []tool.Tool { return rt.universe() }

// Workspaces returns the session's worktree leases: EnterWorktree and
// ExitWorktree (its Tools) and what Close lets go of at the end.
func (rt *Crew) Workspaces() *worktree.Workspaces { return rt.workspaces }

// Catalog returns the session's agent definitions.
func (rt *Crew) Catalog() *agentdef.Catalog { return rt.cfg.Catalog }

// Prices returns the price table agents are charged by.
func (rt *Crew) Prices() llm.PriceTable { return rt.cfg.Prices }

// Tasks returns the session's task registry.
func (rt *Crew) Tasks() *task.Registry { return rt.cfg.Tasks }

// Flags returns the session's feature flags.
func (rt *Crew) Flags() *flags.Set { return rt.cfg.Flags }

// Cwd returns the session's working directory.
func (rt *Crew) Cwd() string { return rt.cfg.Cwd }

// SessionID returns the session's id.
func (rt *Crew) SessionID() string { return rt.cfg.SessionID }

// Lead returns the session's lead, once NewLead has made it.
func (rt *Crew) Lead() (*Agent, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.lead, rt.lead != nil
}

// Agents returns every agent of the session in memory, running or
// finished, in the order they were made (retired ones are in Retired).
func (rt *Crew) Agents() []*Agent {
	out, _ := rt.Snapshot()
	return out
}

// Snapshot returns Agents and Retired at one moment: an agent is in one or
// the other.
func (rt *Crew) Snapshot() ([]*Agent, RetiredTotals) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]*Agent, 0, len(rt.agents))
	for _, a := range rt.agents {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *Agent) int { return cmp.Compare(a.seq, b.seq) })
	return out, rt.retired
}

// Lookup returns the agent with id.
func (rt *Crew) Lookup(id string) (*Agent, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	a, ok := rt.agents[id]
	return a, ok
}

// LookupName returns the agent a name addresses: the running agent with
// that name if there is one, else — when latest is set, for a resume — the
// most recently started one. A name reused after its first agent finished
// therefore reaches the new agent, never the old one.
func (rt *Crew) LookupName(name string, latest bool) (*Agent, bool) {
	rt.mu.Lock()
	list := slices.Clone(rt.named[name])
	rt.mu.Unlock()
	for _, a := range slices.Backward(list) {
		if rt.running(a) {
			return a, true
		}
	}
	if latest && len(list) > 0 {
		return list[len(list)-1], true
	}
	return nil, false
}

// Running reports whether a is working or about to: an activation runs,
// or its task has not ended.
func (rt *Crew) Running(a *Agent) bool { return rt.running(a) }

func (rt *Crew) running(a *Agent) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live || a.busy > 0 {
		return true
	}
	return a.task != nil && !a.task.State().Status.Terminal()
}

// Queue returns the notification queue of agent id (nil if unknown):
// TaskOutput withdraws from it what it has already shown.
func (rt *Crew) Queue(id string) *task.Queue {
	if a, ok := rt.Lookup(id); ok {
		return a.queue
	}
	return nil
}

func (rt *Crew) register(a *Agent) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.registerLocked(a)
}

// registerLocked is register with rt.mu held.
func (rt *Crew) registerLocked(a *Agent) {
	rt.seq++
	a.seq = rt.seq
	rt.agents[a.ID()] = a
	if name := a.Info().Name; name != "" {
		rt.named[name] = append(rt.named[name], a)
	}
	if a.role == agentdef.RoleMain {
		rt.lead = a
	}
}

// acquire takes a concurrency slot, waiting (queued) while all are busy.
func (rt *Crew) acquire(ctx context.Context, t *task.Task) error {
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

func (rt *Crew) release() { <-rt.sem }

// NewAgentID returns a fresh agent id: "a" and 16 hex digits.
func NewAgentID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "a" + hex.EncodeToString(b[:])
}

// modelFor resolves a model id through the aliases.
func (rt *Crew) modelFor(m string) string { return agentdef.ResolveAlias(m, rt.cfg.Aliases) }

func (rt *Crew) flags() *flags.Set { return rt.cfg.Flags }
