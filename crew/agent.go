package crew

import (
	"context"
	"errors"
	"sync"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/fork"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/plan"
)

// Agent is one agent of the session, running or finished: its record
// (tool.Caller), its definition, its queue, its engine and permission
// state. Its fields are private; the methods are safe for concurrent use.
type Agent struct {
	rt  *Crew
	seq int // order of registration
	// siblings orders the first activation of a teammate spawned with
	// others (siblings.go) among those of its cacheable prefix
	// siblingPrefix; siblingOpen lets the rest of the group go when this
	// one went first (a.mu).
	siblings      SiblingGate
	siblingPrefix string
	siblingOpen   func()
	def           *agentdef.Definition
	// effort is the Agent call's effort, which wins over the
	// definition's; "" leaves the definition's.
	effort string
	role   agentdef.Role
	queue  *task.Queue
	// fork is the recursion guard's context flag (a fork never forks).
	fork bool
	// checker is the agent's permission state (nil: everything allowed).
	checker  *permission.Checker
	prompter permission.Prompter
	approver PlanApprover

	mu       sync.Mutex
	info     tool.Caller
	guard    tool.WriteGuard
	engine   *engine.Conversation
	hooks    engine.Hooks
	tools    []tool.Tool
	own      []tool.Tool // its definition's own MCP tools (Config.Extras)
	planPool bool        // the pool was cut for plan mode
	result   *engine.Result
	opening  []llm.Block
	system   []llm.Block
	closers  []func() error
	task     *task.Task // its latest task, if it runs as one
	busy     int        // activations running
	// live is set while an activation runs or is about to (a spawned or
	// resumed agent): a message delivered then joins it; otherwise the
	// message resumes the agent (Deliver).
	live bool
	// ends counts finished activations; evicted is set once a finished
	// agent's engine was dropped (evict.go), and spent keeps what its
	// dropped engines had used.
	ends    int
	evicted bool
	// retired is set once the record has left the runtime's maps for the
	// index (retire.go); a message that still holds it recalls it.
	retired bool
	spent   llm.Usage
	spentUS float64
	// account is what its requests are checked against and charged to
	// (nil: no caps).
	account *budget.Account
}

// PlanApprover decides an agent's plan when it leaves plan mode (a
// teammate asks its lead). Without one, the permission gate's answer to
// ExitPlanMode is the approval (the lead's user).
type PlanApprover func(ctx context.Context, plan string) (plan.Verdict, error)

// readPolicy is what the agent's tools leave out of what they read: its
// checker's Read deny rules (nil without a checker).
func (a *Agent) access() tool.Access {
	if a.checker == nil {
		return nil
	}
	return a.checker
}

// ownOutput lets the agent read the output file of one of its tasks
// without asking (its checker's AllowOwnRead): Cohort named the file in
// the agent's own tool result or notification.
func (a *Agent) ownOutput(path string) {
	if a != nil && a.checker != nil && path != "" {
		a.checker.AllowOwnRead(path)
	}
}

// Info returns a snapshot of the agent's record. A synchronous subagent
// moved to the background (Ctrl+B, or after AutoBackground) is of kind
// background from that moment on.
func (a *Agent) Info() tool.Caller {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.info.Kind == tool.KindSubagent && a.task != nil {
		select {
		case <-a.task.Backgrounded():
			a.info.Kind = tool.KindBackground
		default:
		}
	}
	return a.info
}

// ID returns the agent's id.
func (a *Agent) ID() string { return a.Info().ID }

// Def returns the agent's definition (nil for a lead without one).
func (a *Agent) Def() *agentdef.Definition { return a.def }

// Role returns the kind of pool the agent was given.
func (a *Agent) Role() agentdef.Role { return a.role }

// Queue returns the agent's queue: its tasks' notifications and messages
// for it, drained at its tool-result boundaries.
func (a *Agent) Queue() *task.Queue { return a.queue }

// Engine returns the agent's engine (nil before it starts).
func (a *Agent) Engine() *engine.Conversation {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.engine
}

// Hooks returns the agent's hook runner (nil when it has none); its
// optional capabilities are package hook's interfaces.
func (a *Agent) Hooks() engine.Hooks {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hooks
}

// Opening returns the blocks the agent's conversation opens with (its
// memory files): ahead of its first user message, and again when a
// compaction, a clear or a rewind opens it anew — for a resumed agent as
// for a new one. A fork's is empty (its parent's history opens it).
func (a *Agent) Opening() []llm.Block {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.opening
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

// Result returns everything the agent's activations so far have done (nil
// before the first ends): turns, tool uses, usage, cost and duration
// summed.
func (a *Agent) Result() *engine.Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.result
}

// addResult adds one activation's result to the agent's.
func (a *Agent) addResult(r *engine.Result) {
	if r == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.result == nil {
		c := *r
		a.result = &c
		return
	}
	a.result.Add(r)
}

// Close releases what the agent holds open (its transcript). Safe to call
// more than once.
func (a *Agent) Close() {
	a.mu.Lock()
	closers := a.closers
	a.closers = nil
	a.live = false // closed, it runs nothing more
	a.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		_ = closers[i]()
	}
}

// isFork reports whether a is a fork child, by flag or by its history.
func (a *Agent) isFork() bool {
	if a.fork {
		return true
	}
	eng := a.Engine()
	return eng != nil && fork.In(eng.History())
}

// Mode returns the agent's permission mode.
func (a *Agent) Mode() permission.Mode { return a.Info().Mode }

// SetMode switches the agent's permission mode (plan mode's tools, a
// session's mode change). Leaving plan mode when the agent's pool was cut
// for it gives the agent the pool of its new mode, from its next request
// on; entering plan mode keeps the pool (the permission gate refuses what
// plan mode forbids, and the tool array stays cached).
func (a *Agent) SetMode(m permission.Mode) error {
	if a.checker != nil {
		if err := a.checker.SetMode(m); err != nil {
			return err
		}
	}
	a.mu.Lock()
	a.info.Mode = m
	rec, guard, eng := a.info, a.guard, a.engine
	widen := a.planPool && m != permission.ModePlan
	a.mu.Unlock()
	if eng != nil {
		eng.SetAgent(rec, guard)
	}
	if widen {
		tools, _ := a.rt.pool(a) // Lacking is read only for tools not in the pool
		a.mu.Lock()
		a.tools, a.planPool = tools, false
		a.mu.Unlock()
		if eng != nil {
			eng.SetTools(tools)
		}
	}
	return nil
}

// SetModel makes the agent's later requests name model (an id; resolve
// aliases first), and agents it spawns that inherit its model get it.
func (a *Agent) SetModel(model string) {
	a.mu.Lock()
	a.info.Model = model
	rec, guard, eng := a.info, a.guard, a.engine
	a.mu.Unlock()
	if eng != nil {
		eng.SetModel(model)
		eng.SetAgent(rec, guard)
	}
}

// Task returns the task the agent last ran as (nil for the lead and for an
// agent that has not started).
func (a *Agent) Task() *task.Task {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.task
}

// AttachTask records the task an agent runs as when another layer started
// it (an in-process teammate's, started by the team layer), so that its
// record shows the task's times and progress as a spawned agent's does.
func (a *Agent) AttachTask(t *task.Task) {
	a.setTask(t)
}

// ApprovePlan asks the agent's plan approver, if it has one (plan.Agent);
// ok is false when it has none (the permission gate's answer to
// ExitPlanMode was the approval).
func (a *Agent) ApprovePlan(ctx context.Context, text string) (v plan.Verdict, ok bool, err error) {
	if a.approver == nil {
		return plan.Verdict{}, false, nil
	}
	v, err = a.approver(ctx, text)
	return v, true, err
}

var _ plan.Planner = (*Agent)(nil)

// move switches the agent's working directory and write guard from its
// next tool call on (EnterWorktree and ExitWorktree). Agents it spawns
// afterwards start there too.
func (a *Agent) move(cwd string, guard tool.WriteGuard) error {
	a.mu.Lock()
	eng := a.engine
	if eng == nil {
		a.mu.Unlock()
		return errors.New("it has not started")
	}
	a.info.Cwd, a.guard = cwd, guard
	a.info.Worktree = worktreeOf(guard)
	rec := a.info
	a.mu.Unlock()
	eng.SetAgent(rec, guard)
	return nil
}
