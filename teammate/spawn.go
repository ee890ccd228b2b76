package teammate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/runtime"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/isolation"
)

// registerWait bounds how long a spawn waits for a teammate process to
// register (take its inbox and publish its status).
const registerWait = 30 * time.Second

// SpawnTeammate is the teammate path of the Agent tool: it adds the member
// to the team file and starts it on the chosen backend, returning once the
// teammate has registered.
func (l *Lead) SpawnTeammate(ctx context.Context, rt *runtime.Runtime, parent *runtime.Agent, env *tool.Env, in agenttool.Input) (tool.Result, error) {
	current := l.teamName()
	if current == "" {
		return tool.Errorf("There is no team yet: create one with TeamCreate{team_name: %q}, then spawn teammates into it.", in.TeamName), nil
	}
	if in.TeamName != current {
		return tool.Errorf("This session leads team %q, not %q; spawn teammates into %q.", current, in.TeamName, current), nil
	}
	if in.Name == team.LeadName {
		return tool.Errorf("%q is the lead's own name; choose another name for the teammate.", team.LeadName), nil
	}
	typ := in.SubagentType
	if typ == "" || typ == "fork" {
		typ = agent.GeneralPurpose
	}
	def, ok := rt.Catalog().Get(typ)
	if !ok {
		return tool.Errorf("Unknown subagent_type %q for a teammate.", typ), nil
	}
	lm := l.cfg.Checker.Mode()
	mode := permission.Mode(in.Mode)
	if mode == "" {
		mode = agent.ResolveMode(lm, def)
	}
	plan := mode == permission.ModePlan
	if plan {
		mode = agent.ResolveMode(lm, def)
	}
	if mode.Exceeds(lm) {
		return tool.Errorf("mode %q would give the teammate more permissions than you have (%s).", mode, lm), nil
	}
	backend := l.backend(in.Name)
	cwd := parent.Info().Cwd
	var lease *isolation.Lease
	if in.Isolation == "worktree" {
		ls, err := rt.LeaseWorktree(ctx, runtime.AgentSpec{ID: team.AgentID(in.Name, current),
			Name: in.Name, Team: current, Def: def, Role: agent.RoleTeammate, Depth: 1, Mode: mode, Cwd: cwd}, in.Description)
		if err != nil {
			return tool.Errorf("Could not give teammate %q a worktree: %v", in.Name, err), nil
		}
		lease, cwd = ls, ls.Cwd(cwd)
	}
	spec := team.MemberSpec{Name: in.Name, AgentType: def.Name,
		Model: in.Model, Prompt: in.Prompt, PlanModeRequired: plan, Cwd: cwd,
		SessionID: l.cfg.SessionID, BackendType: team.BackendType(backend), Mode: string(mode)}
	if lease != nil {
		spec.WorktreePath = lease.Path()
	}
	m, err := l.cfg.Store.AddMember(ctx, current, spec)
	if err != nil && lease != nil {
		_, _ = lease.Finish(context.WithoutCancel(ctx))
	}
	if errors.Is(err, team.ErrMemberExists) {
		return tool.Errorf("Team %q already has an active member named %q; choose another name.", current, in.Name), nil
	}
	if err != nil {
		return tool.Errorf("Could not add %q to team %q: %v", in.Name, current, err), nil
	}
	if backend == BackendTmux {
		err = l.spawnProcess(ctx, current, m, lease)
	} else {
		err = l.spawnInProcess(ctx, rt, parent, current, m, def, in, env, lease)
	}
	if err != nil {
		_, _ = l.cfg.Store.SetActive(context.WithoutCancel(ctx), current, m.Name, false)
		if lease != nil {
			_, _ = lease.Finish(context.WithoutCancel(ctx))
		}
		return tool.Errorf("Could not start teammate %q: %v", in.Name, err), nil
	}
	l.emit(Event{Kind: EventJoined, Team: current, From: m.Name, Text: fmt.Sprintf("%s (%s, %s)", m.AgentID, backend, m.Color)})
	text := fmt.Sprintf("Teammate %s (%s, color %s, %s backend) joined team %s and is working on its prompt. It reports with SendMessage when done; talk to it with SendMessage{to: %q}.",
		m.Name, m.AgentID, m.Color, backend, current, m.Name)
	if plan {
		text += " It starts in plan mode and will ask you to approve its plan first."
	}
	if lease != nil {
		text += fmt.Sprintf(" It works in its own git worktree at %s (branch %s).", lease.Path(), lease.Branch())
	}
	return tool.Result{Content: tool.Text(text).Content, Meta: m}, nil
}

func (l *Lead) backend(name string) string {
	choice := l.cfg.Backend
	if b, ok := l.cfg.Backends[name]; ok {
		choice = b
	}
	if choice == BackendTmux && l.cfg.Process != nil {
		return BackendTmux
	}
	return BackendInProcess
}

// spawnInProcess runs the teammate as a goroutine owned by the task
// registry (so TaskStop and session end stop it).
func (l *Lead) spawnInProcess(ctx context.Context, rt *runtime.Runtime, parent *runtime.Agent, teamName string, m team.Member, def *agent.Definition, in agenttool.Input, env *tool.Env, lease *isolation.Lease) error {
	cfg := Config{Team: teamName, Member: m, Store: l.cfg.Store, Runtime: rt, ParentID: parent.ID(),
		Def: def, LeadModel: l.cfg.LeadModel, Checker: l.cfg.Checker.ForChild(permission.Mode(m.Mode)),
		PermissionTimeout: l.cfg.PermissionTimeout, Heartbeat: l.cfg.Heartbeat, Now: l.cfg.Now,
		Logf: l.cfg.Logf, OnEvent: l.cfg.OnEvent}
	if lease != nil {
		cfg.Guard = lease.Guard
	}
	tm, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	t, err := l.cfg.Tasks.Start(l.ctx, task.Spec{Kind: task.KindTeammate,
		Description: "teammate " + m.Name, Prompt: in.Prompt, SubagentType: def.Name, AgentID: m.AgentID,
		Name: m.Name, ToolUseID: env.ToolUseID, ParentAgentID: parent.ID(), Background: true},
		func(ctx context.Context, _ *task.Task) (task.Outcome, error) {
			err := tm.Run(ctx)
			out := task.Outcome{Text: m.Name + " shut down"}
			if errors.Is(err, context.Canceled) {
				out.Text = m.Name + " stopped"
			}
			l.finishLease(teamName, m.Name, lease, &out)
			return out, err
		})
	if err != nil {
		tm.close()
		return err
	}
	l.mu.Lock()
	l.members[m.Name] = &handle{name: m.Name, inProc: t}
	l.mu.Unlock()
	return nil
}

// spawnProcess starts `cohort teammate` through the process backend and
// waits until it has registered.
func (l *Lead) spawnProcess(ctx context.Context, teamName string, m team.Member, lease *isolation.Lease) error {
	pane, err := l.cfg.Process.Spawn(ctx, teamName, m)
	if err != nil {
		return err
	}
	if _, err := l.cfg.Store.SetPane(ctx, teamName, m.Name, pane); err != nil {
		l.cfg.Logf("teammate: record pane of %s: %v", m.Name, err)
	}
	l.mu.Lock()
	l.members[m.Name] = &handle{name: m.Name, process: pane, lease: lease}
	l.mu.Unlock()
	dir, err := l.cfg.Store.Dir(teamName)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(registerWait)
	for time.Now().Before(deadline) {
		if st, ok, _ := readStatus(dir, m.Name); ok && st.State != StateStopped && st.State != StateDead && st.Heartbeat.After(m.JoinedAt.Add(-time.Second)) {
			return nil
		}
		if !l.cfg.Process.Alive(ctx, pane) {
			return fmt.Errorf("the teammate process exited before it registered (see tmux pane %s)", pane)
		}
		select {
		case <-ctx.Done():
			_ = l.cfg.Process.Kill(context.WithoutCancel(ctx), pane)
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	_ = l.cfg.Process.Kill(ctx, pane)
	return fmt.Errorf("the teammate process did not register within %s", registerWait)
}

// IsolatesTeammates tells the Agent tool that teammates spawned with
// isolation "worktree" get a worktree of their own.
func (l *Lead) IsolatesTeammates() bool { return true }

// finishLease ends an isolated teammate's hold on its worktree: a clean one
// is removed, a changed one kept and its path recorded in the outcome.
func (l *Lead) finishLease(teamName, name string, lease *isolation.Lease, out *task.Outcome) {
	if lease == nil {
		return
	}
	res, err := lease.Finish(context.Background())
	if err != nil {
		l.cfg.Logf("teammate: worktree of %s: %v", name, err)
		return
	}
	if res.Kept && out != nil {
		out.WorktreePath, out.WorktreeBranch = res.Path, res.Branch
	}
}
