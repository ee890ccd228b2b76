package crew

import (
	"context"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// AgentSpec describes an agent that another package drives itself — a
// teammate, in this process or in its own: NewAgent builds it like every
// other agent and Activate runs its pieces of work through the same path
// as a subagent's.
type AgentSpec struct {
	ID    string // default: a new id
	Name  string
	Team  string
	Kind  tool.Kind // default: teammate
	Color string
	Def   *agentdef.Definition
	Role  agentdef.Role
	Depth int
	// Model is an id or alias; empty means the definition's, else
	// ParentModel.
	Model       string
	ParentModel string
	Mode        permission.Mode
	Cwd         string // default: the session's
	ParentID    string
	// Append adds to the system prompt (a teammate's role in its team).
	Append string
	// System, when set, is the whole system prompt (prompt.Chain.Override:
	// the dream agent's): no definition prompt, default prompt or Append,
	// and no memory files in its first message.
	System string
	// Checker is the agent's permission state (default: a child of the
	// session's, in Mode); Prompter answers its "ask" decisions (default:
	// the session's).
	Checker  *permission.Checker
	Prompter permission.Prompter
	// PlanApprover decides its plan when it leaves plan mode.
	PlanApprover PlanApprover
	// Inbox is drained at its tool-result boundaries, before its own
	// queue (a teammate's mailbox chat).
	Inbox engine.Inbox
	// Guard confines it to a worktree (a LeaseWorktree lease's Guard).
	Guard tool.WriteGuard
	// SpawnedBy is the Agent call that spawned it: agents one message
	// spawns together start behind the first of their group (siblings.go).
	SpawnedBy string
	// Siblings orders its first activation among agents spawned together
	// in other processes (a teammate in a tmux pane), where SpawnedBy
	// means nothing.
	Siblings SiblingGate
	// Live makes it count as running from the start, for an agent whose
	// first activation is about to begin (the dream's): listings never
	// show it finished before its task is attached. Its activation or
	// Close ends that.
	Live bool
}

// specAgent makes the record of the agent spec describes.
func (rt *Crew) specAgent(spec AgentSpec) *Agent {
	info := tool.Caller{ID: spec.ID, Name: spec.Name, Team: spec.Team, Kind: spec.Kind, Color: spec.Color,
		Mode: spec.Mode, Cwd: spec.Cwd, Depth: spec.Depth, ParentID: spec.ParentID}
	if info.ID == "" {
		info.ID = NewAgentID()
	}
	if info.Kind == "" {
		info.Kind = tool.KindTeammate
	}
	if info.Cwd == "" {
		info.Cwd = rt.cfg.Cwd
	}
	defModel := ""
	if spec.Def != nil {
		info.Type = spec.Def.Name
		defModel = spec.Def.Model
	}
	info.Model = agentdef.ResolveModel(rt.cfg.Getenv, spec.Model, defModel, spec.ParentModel, rt.cfg.Aliases)
	info.Worktree = worktreeOf(spec.Guard)
	a := &Agent{rt: rt, def: spec.Def, role: spec.Role, queue: task.NewQueue(), info: info,
		checker: spec.Checker, prompter: spec.Prompter, approver: spec.PlanApprover, guard: spec.Guard, live: spec.Live}
	if a.checker == nil && rt.cfg.Permissions != nil {
		a.checker = rt.cfg.Permissions.ForChild(spec.Mode)
	}
	if a.prompter == nil {
		a.prompter = rt.cfg.Prompter
	}
	return a
}

// NewAgent builds and registers the agent spec describes, its engine ready.
// Run its work with Activate; Close it when it ends.
func (rt *Crew) NewAgent(ctx context.Context, spec AgentSpec) (*Agent, error) {
	a := rt.specAgent(spec)
	in := planInput{chain: prompt.Chain{Append: spec.Append, Override: spec.System}}
	if spec.Inbox != nil {
		in.inbox = inboxes{spec.Inbox, queueInbox{a.queue}}
	}
	p, err := rt.buildPlan(ctx, a, in)
	if err != nil {
		return nil, err
	}
	if batch := rt.batchOf(spec.SpawnedBy); spec.SpawnedBy != "" && batch != "" {
		// Which sibling goes first is decided when they activate, not
		// here: a teammate made first may be the last to start.
		a.siblings = batchGate{rt, batch}
	} else {
		a.siblings = spec.Siblings
	}
	if a.siblings != nil {
		a.siblingPrefix = prefixKey(p.cfg)
		p.cfg.Sink = onFirstToken(a.releaseSiblings, p.cfg.Sink)
	}
	a.adopt(p)
	rt.register(a)
	return a, nil
}

// Activate runs one piece of a's work — content as its next user message
// (its first, with first set, which fires SubagentStart) until it is done
// with it — through the path every spawned agent takes: the per-agent
// deadline, SubagentStart and SubagentStop, the notifications of its own
// background tasks, one summed Result. Calls for one agent must not
// overlap.
func (rt *Crew) Activate(ctx context.Context, a *Agent, content []llm.Block, origin string, first bool) (*engine.Result, error) {
	prompt := ""
	if n := len(content); n > 0 {
		prompt = content[n-1].Text
	}
	if first {
		release, err := rt.enterSiblings(ctx, a)
		if err != nil {
			return nil, err
		}
		defer release() // the rest go at its first token, or when this ends
	}
	return rt.activate(ctx, a, activation{content: content, origin: origin, prompt: prompt, start: first})
}
