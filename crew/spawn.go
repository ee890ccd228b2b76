package crew

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// stopWait bounds how long a cancelled call waits for its child to finish
// (the task registry's own stop deadline is the same order).
const stopWait = 15 * time.Second

// Request asks for an agent below a parent: a synchronous subagent, a
// background agent or a fork.
type Request struct {
	Description string
	Prompt      string
	// Name makes the agent addressable by SendMessage while it runs.
	Name string
	// Def is the definition to run; nil makes a fork of the parent.
	Def *agentdef.Definition
	// Model is the call's model (an alias or id), if any.
	Model string
	// Effort is the call's effort level (low, medium, high, xhigh, max),
	// if any; it wins over the definition's. A fork ignores it: it runs
	// at its parent's effort.
	Effort string
	// Mode is the call's permission mode, if any; it may not exceed the
	// parent's.
	Mode permission.Mode
	// Isolation "worktree" gives the agent a worktree of its own.
	Isolation string
	// Cwd is the call's working directory (the agent_cwd flag), if any.
	Cwd string
	// Background returns at once; the parent is notified when it ends.
	// Forks always run in the background.
	Background bool
	// Workflow, when set, is the task id of the workflow run this agent is
	// a step of: it runs as a background agent whose task is a child of
	// the workflow's (stopping the run stops it) and notifies nobody; the
	// workflow reads its result from the task when it ends.
	Workflow string
	// Teammate, with isolation "remote", makes the job a teammate spawn
	// (package teammate's remote backend): the worker runs that member of
	// a team on NATS until it shuts down, starting from the caller's
	// working tree as it is, uncommitted changes included.
	Teammate *remote.Teammate
}

// Refusal is a spawn the runtime would not make or could not start. Its
// text is a sentence for the model (the Agent call's is_error result).
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &Refusal{msg: fmt.Sprintf(format, args...)} }

// Spawned is an agent started by Spawn.
type Spawned struct {
	Agent *Agent
	Task  *task.Task
	// Background is set when the agent runs in the background from the
	// start: its result arrives as a notification.
	Background bool
}

// Spawn starts an agent below parent for the tool call env is running.
// Errors are *Refusal: sentences for the model. A foreground agent's
// result is had with Wait.
func (rt *Crew) Spawn(ctx context.Context, parent *Agent, env *tool.Env, req Request) (*Spawned, error) {
	if req.Def == nil {
		return rt.spawnFork(ctx, parent, env, req)
	}
	depth := parent.Info().Depth + 1
	if depth > rt.cfg.MaxDepth {
		return nil, refuse("Cannot start another agent: the nesting limit of %d levels is reached. Do this part of the work yourself.", rt.cfg.MaxDepth)
	}
	mode, err := ChildMode(parent.Mode(), req.Def, req.Mode)
	if err != nil {
		return nil, err
	}
	if req.Mode == "" {
		if err := rt.ApproveMode(ctx, parent, env, req.Def, mode); err != nil {
			return nil, err
		}
	}
	cwd, err := rt.childCwd(parent, req)
	if err != nil {
		return nil, err
	}
	role, kind := agentdef.RoleSubagent, tool.KindSubagent
	if req.Background || req.Workflow != "" {
		role, kind = agentdef.RoleBackground, tool.KindBackground
	}
	child := rt.newAgent(parent, req.Def, role, tool.Caller{ID: NewAgentID(), Name: req.Name, Kind: kind,
		Type: req.Def.Name, Mode: mode, Cwd: cwd, Depth: depth, ParentToolUseID: env.ToolUseID,
		Model: agentdef.ResolveModel(rt.cfg.Getenv, req.Model, req.Def.Model, parent.Info().Model, rt.cfg.Aliases)})
	child.effort = req.Effort
	ws, err := rt.isolate(ctx, child, env, req)
	if err != nil {
		return nil, err
	}
	p, err := rt.buildPlan(ctx, child, planInput{})
	if err != nil {
		p.close()
		ws.abandon(ctx)
		return nil, refuse("Could not prepare the agent: %v", err)
	}
	p.cfg.Env.Files = env.Files.Clone()
	spec := rt.taskSpec(child, parent, req, p.transcript)
	if !req.Background && req.Workflow == "" && rt.flags().Bool(flags.AutoBackgroundAgents) {
		spec.AutoBackground = time.Duration(rt.flags().Int(flags.AutoBackgroundAfterS)) * time.Second
	}
	run := taskRun{plan: p, act: activation{content: append(child.Opening(), llm.Text(req.Prompt)), prompt: req.Prompt, start: true}}
	rt.staggerSiblings(env.ToolUseID, p.cfg, &run)
	return rt.startTask(ctx, child, spec, ws, run, "Could not start the agent: %v")
}

// startTask starts child's task and registers child as the task is
// registered: a snapshot of the agents never shows it running without its
// task (no description, no start time), and it is not listed at all when
// its task could not start.
func (rt *Crew) startTask(ctx context.Context, child *Agent, spec task.Spec, ws *workspace, run taskRun, failure string) (*Spawned, error) {
	spec.Registered = func(t *task.Task) {
		child.setTask(t)
		child.setLive(true)
		rt.register(child)
	}
	t, err := rt.cfg.Tasks.Start(ctx, spec, ws.wrap(rt.taskBody(child, run)))
	if err != nil {
		child.setLive(false)
		if run.done != nil {
			run.done()
		}
		run.plan.close()
		ws.abandon(ctx)
		return nil, refuse(failure, err)
	}
	if parent, ok := rt.Lookup(child.Info().ParentID); ok {
		parent.ownOutput(t.State().OutputFile)
	}
	return &Spawned{Agent: child, Task: t, Background: spec.Background}, nil
}

// taskSpec describes child's task: the record's facts, in one place.
func (rt *Crew) taskSpec(child, parent *Agent, req Request, transcript string) task.Spec {
	info := child.Info()
	spec := task.Spec{ID: info.ID, Kind: task.KindLocalAgent, Description: req.Description, Prompt: req.Prompt,
		SubagentType: info.Type, AgentID: info.ID, Name: info.Name, ToolUseID: info.ParentToolUseID,
		ParentAgentID: info.ParentID, Queue: parent.queue, Background: req.Background,
		Linked: !req.Background, Transcript: transcript}
	if req.Workflow != "" {
		spec.ParentID, spec.Queue, spec.Background, spec.Linked = req.Workflow, nil, true, false
	}
	return spec
}

// newAgent makes the record of an agent spawned below parent.
func (rt *Crew) newAgent(parent *Agent, def *agentdef.Definition, role agentdef.Role, info tool.Caller) *Agent {
	info.ParentID = parent.ID()
	a := &Agent{rt: rt, def: def, role: role, queue: task.NewQueue(), info: info}
	if rt.cfg.Permissions != nil {
		a.checker = rt.cfg.Permissions.ForChild(info.Mode)
	}
	a.prompter = rt.cfg.Prompter
	return a
}

// Wait waits for a foreground agent and returns its task's final state.
// task.ErrBackgrounded means it moved to the background (its result comes
// as a notification). When ctx ends the agent is cancelled too, and Wait
// returns only once its run has finished (bounded), so its tools'
// processes are reaped before the caller goes on.
func (s *Spawned) Wait(ctx context.Context) (task.State, error) {
	st, err := s.Task.Await(ctx)
	if err != nil && !errors.Is(err, task.ErrBackgrounded) {
		select {
		case <-s.Task.Done():
		case <-time.After(stopWait):
		}
	}
	return st, err
}

// ChildMode resolves a spawned agent's permission mode: the definition's
// (or the parent's), overridden by the call's mode only when that does not
// exceed the parent's — a model cannot grant its child more than it has.
func ChildMode(parent permission.Mode, def *agentdef.Definition, requested permission.Mode) (permission.Mode, error) {
	if requested == "" {
		return agentdef.ResolveMode(parent, def), nil
	}
	if requested.Exceeds(parent) {
		return "", refuse("mode %q would give the agent more permissions than you have (%s); use your mode or a stricter one.", requested, parent)
	}
	return requested, nil
}

// childCwd resolves the working directory of a child.
func (rt *Crew) childCwd(parent *Agent, req Request) (string, error) {
	if req.Cwd == "" {
		return parent.Info().Cwd, nil
	}
	if !rt.flags().Bool(flags.AgentCwd) {
		return "", refuse("cwd needs the agent_cwd flag, which is off.")
	}
	if !filepath.IsAbs(req.Cwd) {
		return "", refuse("cwd must be an absolute path, got %q.", req.Cwd)
	}
	if fi, err := os.Stat(req.Cwd); err != nil || !fi.IsDir() {
		return "", refuse("cwd %q is not a directory.", req.Cwd)
	}
	if rt.cfg.CheckCwd != nil {
		cwd, err := rt.cfg.CheckCwd(parent.Info().Cwd, req.Cwd)
		if err != nil {
			return "", refuse("cwd %q: %v", req.Cwd, err)
		}
		return cwd, nil
	}
	return req.Cwd, nil
}
