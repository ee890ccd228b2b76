package swarm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/permission"
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
func (sw *Swarm) SpawnTeammate(ctx context.Context, parent *agenttool.Agent, env *tool.Env, in agenttool.Input) (tool.Result, error) {
	current := sw.teamName()
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
	def, ok := sw.cfg.Runtime.Catalog().Get(typ)
	if !ok {
		return tool.Errorf("Unknown subagent_type %q for a teammate.", typ), nil
	}
	mode := in.Mode
	if mode == "" {
		mode = agent.ResolveMode(string(sw.cfg.Checker.Mode()), def)
	}
	plan := mode == agent.ModePlan
	if plan {
		mode = agent.ResolveMode(string(sw.cfg.Checker.Mode()), def)
	}
	if rank(mode) > rank(string(sw.cfg.Checker.Mode())) {
		return tool.Errorf("mode %q would give the teammate more permissions than you have (%s).", mode, sw.cfg.Checker.Mode()), nil
	}
	backend := sw.backend(in.Name)
	cwd := parent.Cwd
	var lease *isolation.Lease
	if in.Isolation == "worktree" {
		l, err := sw.cfg.Runtime.LeaseWorktree(ctx, agenttool.AgentSpec{ID: team.AgentID(in.Name, current),
			Name: in.Name, Team: current, Def: def, Role: agent.RoleTeammate, Depth: 1, Mode: mode, Cwd: cwd}, in.Description)
		if err != nil {
			return tool.Errorf("Could not give teammate %q a worktree: %v", in.Name, err), nil
		}
		lease, cwd = l, l.Cwd(cwd)
	}
	spec := team.MemberSpec{Name: in.Name, AgentType: def.Name,
		Model: in.Model, Prompt: in.Prompt, PlanModeRequired: plan, Cwd: cwd,
		SessionID: sw.cfg.SessionID, BackendType: team.BackendType(backend), Mode: mode}
	if lease != nil {
		spec.WorktreePath = lease.Path()
	}
	m, err := sw.cfg.Store.AddMember(ctx, current, spec)
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
		err = sw.spawnProcess(ctx, current, m, lease)
	} else {
		err = sw.spawnInProcess(ctx, current, m, def, in, env, lease)
	}
	if err != nil {
		_, _ = sw.cfg.Store.SetActive(context.WithoutCancel(ctx), current, m.Name, false)
		if lease != nil {
			_, _ = lease.Finish(context.WithoutCancel(ctx))
		}
		return tool.Errorf("Could not start teammate %q: %v", in.Name, err), nil
	}
	sw.emit(Event{Kind: EventJoined, Team: current, From: m.Name, Text: fmt.Sprintf("%s (%s, %s)", m.AgentID, backend, m.Color)})
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

func (sw *Swarm) backend(name string) string {
	choice := sw.cfg.Backend
	if b, ok := sw.cfg.Backends[name]; ok {
		choice = b
	}
	if choice == BackendTmux && sw.cfg.Process != nil {
		return BackendTmux
	}
	return BackendInProcess
}

var modeRanks = map[string]int{agent.ModePlan: 0, agent.ModeDefault: 1, agent.ModeDontAsk: 1,
	agent.ModeAcceptEdits: 2, agent.ModeBypassPermissions: 3}

func rank(mode string) int { return modeRanks[mode] }

// spawnInProcess runs the teammate as a goroutine owned by the task
// registry (so TaskStop and session end stop it).
func (sw *Swarm) spawnInProcess(ctx context.Context, teamName string, m team.Member, def *agent.Definition, in agenttool.Input, env *tool.Env, lease *isolation.Lease) error {
	cfg := TeammateConfig{Team: teamName, Member: m, Store: sw.cfg.Store, Runtime: sw.cfg.Runtime,
		Def: def, LeadModel: sw.cfg.LeadModel, Checker: sw.cfg.Checker.ForChild(permission.Mode(m.Mode)),
		PermissionTimeout: sw.cfg.PermissionTimeout, Heartbeat: sw.cfg.Heartbeat, Now: sw.cfg.Now,
		Logf: sw.cfg.Logf, OnEvent: sw.cfg.OnEvent, Swarm: sw}
	if lease != nil {
		cfg.Guard = lease.Guard
	}
	tm, err := StartTeammate(cfg)
	if err != nil {
		return err
	}
	t, err := sw.cfg.Tasks.Start(sw.ctx, task.Spec{Kind: task.KindTeammate,
		Description: "teammate " + m.Name, Prompt: in.Prompt, SubagentType: def.Name, AgentID: m.AgentID,
		Name: m.Name, ToolUseID: env.ToolUseID, ParentAgentID: sw.cfg.LeadID, Background: true},
		func(ctx context.Context, _ *task.Task) (task.Outcome, error) {
			err := tm.Run(ctx)
			out := task.Outcome{Text: m.Name + " shut down"}
			if errors.Is(err, context.Canceled) {
				out.Text = m.Name + " stopped"
			}
			sw.finishLease(teamName, m.Name, lease, &out)
			return out, err
		})
	if err != nil {
		tm.reader.Close()
		tm.built.Close()
		return err
	}
	sw.mu.Lock()
	sw.members[m.Name] = &handle{name: m.Name, inProc: t}
	sw.mu.Unlock()
	return nil
}

// spawnProcess starts `cohort teammate` through the process backend and
// waits until it has registered.
func (sw *Swarm) spawnProcess(ctx context.Context, teamName string, m team.Member, lease *isolation.Lease) error {
	pane, err := sw.cfg.Process.Spawn(ctx, teamName, m)
	if err != nil {
		return err
	}
	if _, err := sw.cfg.Store.SetPane(ctx, teamName, m.Name, pane); err != nil {
		sw.cfg.Logf("swarm: record pane of %s: %v", m.Name, err)
	}
	sw.mu.Lock()
	sw.members[m.Name] = &handle{name: m.Name, process: pane, lease: lease}
	sw.mu.Unlock()
	dir, err := sw.cfg.Store.Dir(teamName)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(registerWait)
	for time.Now().Before(deadline) {
		if st, ok, _ := readStatus(dir, m.Name); ok && st.State != StateStopped && st.State != StateDead && st.Heartbeat.After(m.JoinedAt.Add(-time.Second)) {
			return nil
		}
		if !sw.cfg.Process.Alive(ctx, pane) {
			return fmt.Errorf("the teammate process exited before it registered (see tmux pane %s)", pane)
		}
		select {
		case <-ctx.Done():
			_ = sw.cfg.Process.Kill(context.WithoutCancel(ctx), pane)
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	_ = sw.cfg.Process.Kill(ctx, pane)
	return fmt.Errorf("the teammate process did not register within %s", registerWait)
}

// IsolatesTeammates tells the Agent tool that teammates spawned with
// isolation "worktree" get a worktree of their own.
func (sw *Swarm) IsolatesTeammates() bool { return true }

// finishLease ends an isolated teammate's hold on its worktree: a clean one
// is removed, a changed one kept and its path recorded in the outcome.
func (sw *Swarm) finishLease(teamName, name string, lease *isolation.Lease, out *task.Outcome) {
	if lease == nil {
		return
	}
	res, err := lease.Finish(context.Background())
	if err != nil {
		sw.cfg.Logf("swarm: worktree of %s: %v", name, err)
		return
	}
	if res.Kept && out != nil {
		out.WorktreePath, out.WorktreeBranch = res.Path, res.Branch
	}
}
