package agenttool

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/isolation"
	"github.com/cohort-dev/cohort/worktree"
)

// workspace is where a spawned agent works: a worktree of its own
// (isolation: "worktree"), or the workspace of the call that spawned it —
// its current cwd and write guard, which differ from the parent's starting
// ones once the parent entered a worktree or when it is isolated itself.
// A child of an isolated agent is therefore confined to the same worktree.
type workspace struct {
	rt    *Runtime
	child *Agent
	lease *isolation.Lease // nil unless the child has a worktree of its own
	guard tool.WriteGuard
}

// isolate settles child's workspace before its plan is built. With
// isolation "worktree" it leases a new worktree (the WorktreeCreate hooks
// run first, in the caller's directory) and moves child.Cwd into it.
// Failing that is the call's is_error result: the agent is not started,
// and never runs unisolated instead.
func (rt *Runtime) isolate(ctx context.Context, child *Agent, env *tool.Env, in Input) (*workspace, *tool.Result) {
	w := &workspace{rt: rt, child: child}
	from := child.Cwd
	if env != nil && in.Cwd == "" && env.Cwd != "" {
		from = env.Cwd
	}
	if in.Isolation != "worktree" {
		child.Cwd = from
		if env != nil {
			w.guard = env.Guard
			if g, ok := env.Guard.(*isolation.Guard); ok {
				child.Worktree = g.Worktree()
			}
		}
		return w, nil
	}
	ws := rt.cfg.Worktrees
	if ws == nil {
		r := tool.Errorf(`isolation: "worktree" was requested, but worktree isolation is not set up in this session, so the agent was not started. Leave out isolation to run it in the shared checkout.`)
		return nil, &r
	}
	owner := worktree.Owner{SessionID: rt.cfg.SessionID, AgentID: child.ID}
	lease, err := ws.Create(ctx, isolation.AgentSlug(child.ID, in.Name, in.Description), owner, rt.worktreeHooks(child))
	if err != nil {
		r := tool.Errorf(`isolation: "worktree" was requested but is not possible, so the agent was not started: %v`, err)
		return nil, &r
	}
	child.Cwd = lease.Cwd(from)
	child.Worktree = lease.Path()
	w.lease, w.guard = lease, lease.Guard
	return w, nil
}

// apply confines the child's engine to its workspace.
func (w *workspace) apply(cfg *engine.Config) {
	cfg.Env.Cwd = w.child.Cwd
	cfg.Env.Guard = w.guard
}

// wrap runs the child's task body and then lets go of its worktrees: its
// own (removed when clean; kept, and named in the outcome, when not) and
// any it entered with EnterWorktree and did not leave. This also happens
// when the agent failed or was stopped.
func (w *workspace) wrap(run task.RunFunc) task.RunFunc {
	return func(ctx context.Context, t *task.Task) (oc task.Outcome, err error) {
		defer func() { oc = w.finish(ctx, oc) }()
		return run(ctx, t)
	}
}

func (w *workspace) finish(ctx context.Context, oc task.Outcome) task.Outcome {
	ws := w.rt.cfg.Worktrees
	if ws == nil {
		return oc
	}
	fctx, cancel := ws.FinishContext(ctx)
	defer cancel()
	if out, ok, err := ws.Release(fctx, w.child.ID); ok && (out.Kept || err != nil) {
		oc.Text = note(oc.Text, fmt.Sprintf("[The agent left the worktree %s (branch %s) that it entered; it was kept because it has changes.]", out.Path, out.Branch), err)
	}
	if w.lease == nil {
		return oc
	}
	out, err := w.lease.Finish(fctx)
	if out.Kept {
		oc.WorktreePath, oc.WorktreeBranch = out.Path, out.Branch
	}
	if err != nil {
		oc.Text = note(oc.Text, "", fmt.Errorf("letting go of the worktree %s: %w", out.Path, err))
	}
	return oc
}

func note(text, msg string, err error) string {
	var parts []string
	if strings.TrimSpace(text) != "" {
		parts = append(parts, text)
	}
	if msg != "" {
		parts = append(parts, msg)
	}
	if err != nil {
		parts = append(parts, "[Worktree problem: "+err.Error()+"]")
	}
	return strings.Join(parts, "\n\n")
}

// abandon lets go of a worktree leased for a child that never started.
func (w *workspace) abandon(ctx context.Context) {
	if w == nil || w.lease == nil {
		return
	}
	fctx, cancel := w.rt.cfg.Worktrees.FinishContext(ctx)
	defer cancel()
	_, _ = w.lease.Finish(fctx)
}

// forkWorktreeNote goes after an isolated fork's directive: its inherited
// conversation speaks of the main checkout's paths. (The system prompt and
// tools stay the parent's byte for byte, for the prompt cache.)
const forkWorktreeNote = `Your worktree: you work in your own git worktree at %s (branch %s), a separate checkout of the same repository. The paths in the conversation above point into the main checkout at %s; the same files are in your worktree under the same relative paths, and your working directory is %s. Read and change files only in the worktree: writing into the main checkout is refused.`

// directive returns a fork's directive, with the worktree note when the
// fork has a worktree of its own.
func (w *workspace) directive(prompt string) string {
	if w.lease == nil {
		return prompt
	}
	return prompt + "\n\n" + fmt.Sprintf(forkWorktreeNote, w.lease.Path(), w.lease.Branch(), w.lease.Root(), w.child.Cwd)
}

// worktreeHooks returns a's worktree hooks: its engine hooks when they also
// fire WorktreeCreate and WorktreeRemove (hook.Scope does).
func (rt *Runtime) worktreeHooks(a *Agent) isolation.Hooks {
	if rt.cfg.Hooks == nil {
		return nil
	}
	h, _ := rt.cfg.Hooks(a).(isolation.Hooks)
	return h
}

// WorktreeHooks returns the worktree hooks of a registered agent, for
// isolation.Config.Hooks.
func (rt *Runtime) WorktreeHooks(agentID string) isolation.Hooks {
	a, ok := rt.Lookup(agentID)
	if !ok {
		return nil
	}
	return rt.worktreeHooks(a)
}

// MoveAgent switches a running agent's working directory and write guard
// from its next tool call on (EnterWorktree and ExitWorktree, through
// isolation.Config.Move). Agents it spawns afterwards start there too.
// Agent.Cwd keeps the directory the agent started in.
func (rt *Runtime) MoveAgent(agentID, cwd string, guard tool.WriteGuard) error {
	a, ok := rt.Lookup(agentID)
	if !ok {
		return fmt.Errorf("agenttool: no agent %q", agentID)
	}
	eng := a.Engine()
	if eng == nil {
		return fmt.Errorf("agenttool: agent %s has not started", agentID)
	}
	eng.SetWorkspace(cwd, guard)
	return nil
}

// LeaseWorktree gives an agent that another package builds and runs (a
// teammate spawned with isolation "worktree") a worktree of its own, made
// and locked for spec.ID (spec.ID must be set) after the WorktreeCreate
// hooks of the agent spec describes. Build the agent with Cwd
// lease.Cwd(spec.Cwd), set its engine config's Env.Guard to lease.Guard,
// and call lease.Finish when it ends: a kept worktree's path and branch
// are in the outcome.
func (rt *Runtime) LeaseWorktree(ctx context.Context, spec AgentSpec, description string) (*isolation.Lease, error) {
	if rt.cfg.Worktrees == nil {
		return nil, fmt.Errorf("worktree isolation is not set up in this session")
	}
	if spec.ID == "" {
		return nil, fmt.Errorf("agenttool: LeaseWorktree needs the agent's id")
	}
	a := &Agent{ID: spec.ID, Name: spec.Name, Team: spec.Team, Def: spec.Def, Role: spec.Role,
		Depth: spec.Depth, Mode: spec.Mode, Cwd: spec.Cwd, ParentID: spec.ParentID}
	if a.Cwd == "" {
		a.Cwd = rt.cfg.Cwd
	}
	if spec.Def != nil {
		a.Type = spec.Def.Name
	}
	owner := worktree.Owner{SessionID: rt.cfg.SessionID, AgentID: spec.ID}
	return rt.cfg.Worktrees.Create(ctx, isolation.AgentSlug(spec.ID, spec.Name, description), owner, rt.worktreeHooks(a))
}

// TeammateIsolator is implemented by a TeammateSpawner that gives
// teammates spawned with isolation "worktree" a worktree of their own (see
// LeaseWorktree). Without it such a spawn is refused, never run
// unisolated.
type TeammateIsolator interface {
	IsolatesTeammates() bool
}

// teammateIsolation refuses isolation "worktree" for teammates when the
// spawner cannot honour it.
func (rt *Runtime) teammateIsolation(in Input) *tool.Result {
	if in.Isolation != "worktree" {
		return nil
	}
	if ti, ok := rt.cfg.Teammates.(TeammateIsolator); ok && ti.IsolatesTeammates() {
		return nil
	}
	r := tool.Errorf(`isolation: "worktree" is not available for teammates in this session, so %q was not started. Spawn the teammate without isolation, or start a background agent with isolation: "worktree" instead.`, in.Name)
	return &r
}
