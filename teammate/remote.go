package teammate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
)

// remoteExitWait bounds how long a lead waits, after a remote teammate
// agreed to shut down, for its job to end with its work (the worker
// collects the changes and stores the result) before it stops the job.
const remoteExitWait = 60 * time.Second

// spawnRemote starts an admitted teammate on a worker: a remote job
// (crew.Crew.SpawnRemote, signed and capped as remote agents are) that
// names the member, the team's NATS server and the key the lead signs the
// team's messages with. The job's task follows it; when the teammate shuts
// down, its changes come back on a branch as a remote agent's do and the
// lead is notified of the task. The lead waits for the teammate to
// register on the team's status board, as for a process teammate.
func (l *Lead) spawnRemote(ctx context.Context, rt *crew.Crew, parent *crew.Agent, env *tool.Env, in crew.AgentInput, ad *admission) error {
	if ad.lease != nil {
		return errors.New(`a remote teammate works in a clone on its worker; leave out isolation "worktree"`)
	}
	m, teamName := ad.m, l.teamName()
	key, err := l.cfg.Store.LeadKey(teamName)
	if err != nil {
		return err
	}
	grants, err := l.cfg.Store.SpawnGrants(teamName)
	if err != nil {
		return err
	}
	terms, err := l.cfg.Store.SpawnTerms(teamName)
	if err != nil {
		return err
	}
	secret := team.NewJoinSecret()
	t, err := rt.SpawnRemote(ctx, parent, env, crew.Request{Description: "teammate " + m.Name, Prompt: m.Prompt,
		Name: m.Name, Def: ad.def, Model: in.Model, Mode: permission.Mode(m.Mode), Isolation: "remote", Background: true,
		Teammate: &remote.Teammate{Team: teamName, Member: m.Name, NATS: l.cfg.NATS, LeadKey: key, JoinSecret: secret,
			PlanModeRequired: m.PlanModeRequired, Grants: grants, TermsCreated: terms.Created, TermsSeq: terms.Seq}})
	if err != nil {
		return err
	}
	if _, err := l.cfg.Store.SetPane(ctx, teamName, m.Name, "remote:"+t.ID()); err != nil {
		l.cfg.Logf("teammate: record the job of %s: %v", m.Name, err)
	}
	actx, stop := context.WithCancel(ctx)
	admitted := make(chan struct{})
	go func() { defer close(admitted); l.admitKey(actx, teamName, m.Name, secret) }()
	defer func() { stop(); <-admitted }()
	return l.register(ctx, &remoteJobs{tasks: l.cfg.Tasks}, t.ID(), teamName, m, nil)
}

// admitKey signs the key a remote teammate claims with its spawn's join
// secret (team.Store.Admit), polling until it has, or until ctx ends (the
// teammate registered, or did not in time). A claim that is not the
// spawn's is logged, not signed.
func (l *Lead) admitKey(ctx context.Context, teamName, member, secret string) {
	var said string
	for ctx.Err() == nil {
		ok, err := l.cfg.Store.Admit(ctx, teamName, member, secret)
		if ok && err == nil {
			return
		}
		if err != nil && err.Error() != said && ctx.Err() == nil {
			said = err.Error()
			l.cfg.Logf("teammate: admitting %s: %v", member, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// remoteJobs is the ProcessBackend of remote teammates: a handle is the
// id of the task that follows the teammate's job. The task ends when the
// job does (its result stored by the worker, or the job given up).
type remoteJobs struct{ tasks *task.Registry }

func (r *remoteJobs) Spawn(context.Context, string, team.Member, string) (string, error) {
	return "", errors.New("teammate: remote teammates are started by spawnRemote")
}

func (r *remoteJobs) Alive(_ context.Context, id string) bool {
	t, ok := r.tasks.Get(id)
	if !ok {
		return false
	}
	select {
	case <-t.Done():
		return false
	default:
		return true
	}
}

// Kill stops the job's task, which cancels the job on its worker.
func (r *remoteJobs) Kill(ctx context.Context, id string) error {
	if _, err := r.tasks.Stop(ctx, id); err != nil && !errors.Is(err, task.ErrNotRunning) {
		return fmt.Errorf("stop remote teammate %s: %w", id, err)
	}
	return nil
}

// await waits up to d for job id's task to end.
func (r *remoteJobs) await(ctx context.Context, id string, d time.Duration) {
	t, ok := r.tasks.Get(id)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	select {
	case <-t.Done():
	case <-ctx.Done():
	}
}
