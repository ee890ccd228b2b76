package crew

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/worktree"
)

// workspace is where a spawned agent works: a worktree of its own
// (isolation: "worktree"), or the workspace of the call that spawned it —
// its current cwd and write guard, which differ from the parent's starting
// ones once the parent entered a worktree or when it is isolated itself.
// A child of an isolated agent is therefore confined to the same worktree.
type workspace struct {
	rt    *Crew
	child *Agent
	lease *worktree.Lease // nil unless the child has a worktree of its own
}

// isolate settles child's workspace before its plan is built. With
// isolation "worktree" it leases a new worktree (the WorktreeCreate hooks
// run first, in the caller's directory) and moves the child into it.
// Failing that is a Refusal: the agent is not started, and never runs
// unisolated instead.
func (rt *Crew) isolate(ctx context.Context, child *Agent, env *tool.Env, req Request) (*workspace, error) {
	w := &workspace{rt: rt, child: child}
	from := child.info.Cwd
	if env != nil && req.Cwd == "" && env.Cwd != "" {
		from = env.Cwd
	}
	if req.Isolation != "worktree" {
		child.info.Cwd = from
		if env != nil {
			child.guard = env.Guard
			child.info.Worktree = worktreeOf(env.Guard)
		}
		return w, nil
	}
	if rt.cfg.Worktrees == nil {
		return nil, refuse(`isolation: "worktree" was requested, but worktree isolation is not set up in this session, so the agent was not started. Leave out isolation to run it in the shared checkout.`)
	}
	owner := worktree.Owner{SessionID: rt.cfg.SessionID, AgentID: child.info.ID}
	lease, err := rt.workspaces.Create(ctx, worktree.AgentSlug(child.info.ID, req.Name, req.Description), owner, rt.worktreeHooks(child))
	if err != nil {
		return nil, refuse(`isolation: "worktree" was requested but is not possible, so the agent was not started: %v`, err)
	}
	child.info.Cwd = lease.Cwd(from)
	child.info.Worktree = lease.Path()
	child.guard = lease.Guard
	w.lease = lease
	return w, nil
}

// worktreeOf names the worktree a write guard confines to, if any.
func worktreeOf(g tool.WriteGuard) string {
	if g, ok := g.(*worktree.Guard); ok {
		return g.Worktree()
	}
	return ""
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
	if w.rt.cfg.Worktrees == nil {
		return oc
	}
	ws := w.rt.workspaces
	fctx, cancel := ws.FinishContext(ctx)
	defer cancel()
	if out, ok, err := ws.Release(fctx, w.child.ID()); ok && (out.Kept || err != nil) {
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
	fctx, cancel := w.rt.workspaces.FinishContext(ctx)
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
	return prompt + "\n\n" + fmt.Sprintf(forkWorktreeNote, w.lease.Path(), w.lease.Branch(), w.lease.Root(), w.child.info.Cwd)
}

// worktreeHooks returns a's worktree hooks: its engine hooks when they
// also fire WorktreeCreate and WorktreeRemove (hook.Scope does).
func (rt *Crew) worktreeHooks(a *Agent) hook.WorktreeHooks {
	if rt.cfg.Hooks == nil {
		return nil
	}
	h, _ := rt.cfg.Hooks(a).(hook.WorktreeHooks)
	return h
}

// worktreeHooksOf returns the worktree hooks of a registered agent (the
// session's Workspaces fire them for EnterWorktree and ExitWorktree).
func (rt *Crew) worktreeHooksOf(agentID string) hook.WorktreeHooks {
	a, ok := rt.Lookup(agentID)
	if !ok {
		return nil
	}
	return rt.worktreeHooks(a)
}

// moveAgent switches a running agent's working directory and write guard
// (EnterWorktree and ExitWorktree, through the session's Workspaces).
func (rt *Crew) moveAgent(agentID, cwd string, guard tool.WriteGuard) error {
	a, ok := rt.Lookup(agentID)
	if !ok {
		return fmt.Errorf("runtime: no agent %q", agentID)
	}
	if err := a.move(cwd, guard); err != nil {
		return fmt.Errorf("runtime: agent %s: %w", agentID, err)
	}
	return nil
}

// LeaseWorktree gives an agent that is built with NewAgent (a teammate
// spawned with isolation "worktree") a worktree of its own, made and locked
// for spec.ID (which must be set) after the WorktreeCreate hooks of the
// agent spec describes. Build the agent with Cwd lease.Cwd(spec.Cwd) and
// Guard lease.Guard, and call lease.Finish when it ends: a kept worktree's
// path and branch are in the outcome.
func (rt *Crew) LeaseWorktree(ctx context.Context, spec AgentSpec, description string) (*worktree.Lease, error) {
	if rt.cfg.Worktrees == nil {
		return nil, fmt.Errorf("worktree isolation is not set up in this session")
	}
	if spec.ID == "" {
		return nil, fmt.Errorf("runtime: LeaseWorktree needs the agent's id")
	}
	a := rt.specAgent(spec)
	owner := worktree.Owner{SessionID: rt.cfg.SessionID, AgentID: spec.ID}
	return rt.workspaces.Create(ctx, worktree.AgentSlug(spec.ID, spec.Name, description), owner, rt.worktreeHooks(a))
}

// worktreeSnapshot is the git snapshot of the worktree at path, taken
// through its repository's manager (which names the worktree to git from
// the repository's records and runs git confined); "" when there is none.
func (rt *Crew) worktreeSnapshot(ctx context.Context, path string) string {
	if rt.cfg.Worktrees == nil {
		return ""
	}
	m, err := rt.cfg.Worktrees(ctx)
	if err != nil {
		return ""
	}
	repo, err := m.Repo(path)
	if err != nil {
		return ""
	}
	var hidden func(string) bool
	if c := rt.cfg.Permissions; c != nil {
		hidden = func(p string) bool { return c.DeniedRead(path, p) }
	}
	return prompt.GitSnapshot(ctx, m.Git(), repo, path, hidden)
}
