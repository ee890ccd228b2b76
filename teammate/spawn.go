package teammate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/worktree"
)

// registerWait bounds how long a spawn waits for a teammate process to
// register (take its inbox and publish its status).
const registerWait = 30 * time.Second

// admission is a teammate spawn whose member is in the team file (and, when
// isolated, has its worktree), not started yet.
type admission struct {
	m       team.Member
	def     *agentdef.Definition
	backend string
	plan    bool
	lease   *worktree.Lease
}

// SpawnTeammate is the teammate path of the Agent tool: it adds the member
// to the team file (unless Reserve already did, for every teammate of the
// calling message) and starts it on the chosen backend, returning once the
// teammate has registered.
func (l *Lead) SpawnTeammate(ctx context.Context, rt *crew.Crew, parent *crew.Agent, env *tool.Env, in crew.AgentInput) (tool.Result, error) {
	if l.testHookSpawn != nil {
		l.testHookSpawn(in.Name)
	}
	ad, refused := l.take(env.ToolUseID)
	if ad == nil && refused == nil {
		ad, refused = l.admit(ctx, rt, parent, in)
	}
	if refused != nil {
		return *refused, nil
	}
	return l.launch(ctx, rt, parent, env, in, ad)
}

// Reserve is the first half of SpawnTeammate for every teammate an
// assistant message spawns (crew.TeammateReserver): each is added to
// the team file before any of them starts, so that teammates spawned
// together can message each other from their first turn. ids are the
// calls' tool_use ids. The returned release undoes the reservations no
// spawn took (a call a hook blocked, say).
func (l *Lead) Reserve(ctx context.Context, rt *crew.Crew, parent *crew.Agent, ids []string, ins []crew.AgentInput) (release func()) {
	l.mu.Lock()
	if l.reserved == nil {
		l.reserved = map[string]reservation{}
	}
	l.mu.Unlock()
	for i, in := range ins {
		ad, refused := l.admit(ctx, rt, parent, in)
		l.mu.Lock()
		l.reserved[ids[i]] = reservation{ad: ad, refused: refused}
		l.mu.Unlock()
	}
	return func() {
		for _, id := range ids {
			if ad, _ := l.take(id); ad != nil {
				l.abandon(ctx, ad)
			}
		}
	}
}

// reservation is what Reserve prepared for one call.
type reservation struct {
	ad      *admission
	refused *tool.Result
}

// take returns (and forgets) the reservation of call id, if any.
func (l *Lead) take(id string) (*admission, *tool.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.reserved[id]
	if !ok {
		return nil, nil
	}
	delete(l.reserved, id)
	return r.ad, r.refused
}

// abandon undoes an admission that was never launched.
func (l *Lead) abandon(ctx context.Context, ad *admission) {
	ctx = context.WithoutCancel(ctx)
	if _, err := l.cfg.Store.SetActive(ctx, l.teamName(), ad.m.Name, false); err != nil {
		l.cfg.Logf("teammate: release %s: %v", ad.m.Name, err)
	}
	if ad.lease != nil {
		_, _ = ad.lease.Finish(ctx)
	}
}

// admit checks a teammate spawn and adds the member to the team file (with
// its worktree, when isolated). A refusal is the call's is_error result.
func (l *Lead) admit(ctx context.Context, rt *crew.Crew, parent *crew.Agent, in crew.AgentInput) (*admission, *tool.Result) {
	refuse := func(format string, args ...any) (*admission, *tool.Result) {
		r := tool.Errorf(format, args...)
		return nil, &r
	}
	current := l.teamName()
	if current == "" {
		return refuse("There is no team yet: create one with TeamCreate{team_name: %q}, then spawn teammates into it.", in.TeamName)
	}
	if in.TeamName != current {
		return refuse("This session leads team %q, not %q; spawn teammates into %q.", current, in.TeamName, current)
	}
	if in.Name == team.LeadName {
		return refuse("%q is the lead's own name; choose another name for the teammate.", team.LeadName)
	}
	typ := in.SubagentType
	if typ == "" || typ == "fork" {
		typ = agentdef.GeneralPurpose
	}
	def, ok := rt.Catalog().Get(typ)
	if !ok {
		return refuse("Unknown subagent_type %q for a teammate.", typ)
	}
	lm := l.cfg.Checker.Mode()
	mode := permission.Mode(in.Mode)
	if mode == "" {
		mode = agentdef.ResolveMode(lm, def)
	}
	plan := mode == permission.ModePlan
	if plan {
		mode = agentdef.ResolveMode(lm, def)
	}
	if mode.Exceeds(lm) {
		return refuse("mode %q would give the teammate more permissions than you have (%s).", mode, lm)
	}
	ad := &admission{def: def, backend: l.backend(in.Name), plan: plan}
	cwd := parent.Info().Cwd
	if in.Isolation == "worktree" {
		ls, err := rt.LeaseWorktree(ctx, crew.AgentSpec{ID: team.AgentID(in.Name, current),
			Name: in.Name, Team: current, Def: def, Role: agentdef.RoleTeammate, Depth: 1, Mode: mode, Cwd: cwd}, in.Description)
		if err != nil {
			return refuse("Could not give teammate %q a worktree: %v", in.Name, err)
		}
		ad.lease, cwd = ls, ls.Cwd(cwd)
	}
	spec := team.MemberSpec{Name: in.Name, AgentType: def.Name,
		Model: in.Model, Prompt: in.Prompt, PlanModeRequired: plan, Cwd: cwd,
		SessionID: l.cfg.SessionID, BackendType: team.BackendType(ad.backend), Mode: string(mode)}
	if ad.lease != nil {
		spec.WorktreePath = ad.lease.Path()
	}
	m, err := l.cfg.Store.AddMember(ctx, current, spec)
	if err != nil && ad.lease != nil {
		_, _ = ad.lease.Finish(context.WithoutCancel(ctx))
	}
	if errors.Is(err, team.ErrMemberExists) {
		return refuse("Team %q already has an active member named %q; choose another name.", current, in.Name)
	}
	if err != nil {
		return refuse("Could not add %q to team %q: %v", in.Name, current, err)
	}
	ad.m = m
	return ad, nil
}

// launch starts an admitted teammate on its backend.
func (l *Lead) launch(ctx context.Context, rt *crew.Crew, parent *crew.Agent, env *tool.Env, in crew.AgentInput, ad *admission) (tool.Result, error) {
	m, current, lease := ad.m, l.teamName(), ad.lease
	var err error
	switch ad.backend {
	case BackendTmux:
		err = l.spawnProcess(ctx, current, m, lease, rt.BatchName(env.ToolUseID))
	case BackendRemote:
		err = l.spawnRemote(ctx, rt, parent, env, in, ad)
	default:
		err = l.spawnInProcess(ctx, rt, parent, current, m, ad.def, in, env, lease)
	}
	if err != nil {
		l.abandon(ctx, ad)
		return tool.Errorf("Could not start teammate %q: %v", in.Name, err), nil
	}
	l.emit(Event{Kind: EventJoined, Team: current, From: m.Name, Text: fmt.Sprintf("%s (%s, %s)", m.AgentID, ad.backend, m.Color)})
	text := fmt.Sprintf("Teammate %s (%s, color %s, %s backend) joined team %s and is working on its prompt. It reports with SendMessage when done; talk to it with SendMessage{to: %q}.",
		m.Name, m.AgentID, m.Color, ad.backend, current, m.Name)
	if ad.plan {
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
	if choice == BackendRemote && l.cfg.NATS != "" {
		return BackendRemote
	}
	return BackendInProcess
}

// spawnInProcess runs the teammate as a goroutine owned by the task
// registry (so TaskStop and session end stop it).
func (l *Lead) spawnInProcess(ctx context.Context, rt *crew.Crew, parent *crew.Agent, teamName string, m team.Member, def *agentdef.Definition, in crew.AgentInput, env *tool.Env, lease *worktree.Lease) error {
	cfg := Config{Team: teamName, Member: m, Store: l.cfg.Store, Runtime: rt, ParentID: parent.ID(),
		Def: def, LeadModel: l.cfg.LeadModel, Checker: l.cfg.Checker.ForChild(permission.Mode(m.Mode)),
		PermissionTimeout: l.cfg.PermissionTimeout, Heartbeat: l.cfg.Heartbeat, Now: l.cfg.Now,
		Logf: l.cfg.Logf, OnEvent: l.cfg.OnEvent, SpawnedBy: env.ToolUseID}
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
			out.TotalTokens, out.ToolUses = tm.Used()
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
	if a := tm.Agent(); a != nil {
		a.AttachTask(t)
	}
	l.mu.Lock()
	l.members[m.Name] = &handle{name: m.Name, inProc: t}
	l.mu.Unlock()
	return nil
}

// spawnProcess starts `cohort teammate` through the process backend and
// waits until it has registered.
func (l *Lead) spawnProcess(ctx context.Context, teamName string, m team.Member, lease *worktree.Lease, siblings string) error {
	pane, err := l.cfg.Process.Spawn(ctx, teamName, m, siblings)
	if err != nil {
		return err
	}
	if _, err := l.cfg.Store.SetPane(ctx, teamName, m.Name, pane); err != nil {
		l.cfg.Logf("teammate: record pane of %s: %v", m.Name, err)
	}
	return l.register(ctx, l.cfg.Process, pane, teamName, m, lease)
}

// register records a teammate started on backend pb as handle pane and
// waits until it has registered (published a live status).
func (l *Lead) register(ctx context.Context, pb ProcessBackend, pane, teamName string, m team.Member, lease *worktree.Lease) error {
	l.mu.Lock()
	if old := l.members[m.Name]; old != nil && old.process != "" {
		l.retired = append(l.retired, old)
	}
	l.members[m.Name] = &handle{name: m.Name, process: pane, backend: pb, lease: lease,
		seen: ProcessMember{Member: m, Team: teamName, Started: l.cfg.Now()}}
	l.mu.Unlock()
	deadline := time.Now().Add(registerWait)
	for time.Now().Before(deadline) {
		if st, ok, _ := statusIn(l.cfg.Store, teamName, m.Name); ok && st.State != StateStopped && st.State != StateDead && st.Heartbeat.After(m.JoinedAt.Add(-time.Second)) {
			return nil
		}
		if !pb.Alive(ctx, pane) {
			return fmt.Errorf("the teammate exited before it registered (%s)", pane)
		}
		select {
		case <-ctx.Done():
			_ = pb.Kill(context.WithoutCancel(ctx), pane)
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	_ = pb.Kill(ctx, pane)
	return fmt.Errorf("the teammate process did not register within %s", registerWait)
}

// IsolatesTeammates tells the Agent tool that teammates spawned with
// isolation "worktree" get a worktree of their own.
func (l *Lead) IsolatesTeammates() bool { return true }

// finishLease ends an isolated teammate's hold on its worktree: a clean one
// is removed, a changed one kept and its path recorded in the outcome.
func (l *Lead) finishLease(teamName, name string, lease *worktree.Lease, out *task.Outcome) {
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
