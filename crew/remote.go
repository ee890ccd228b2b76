package crew

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/worktree"
)

// RemoteQueue is where remote agents run: package remote's Client. Safe
// for concurrent use.
type RemoteQueue interface {
	Submit(ctx context.Context, j *remote.Job, dir, rev string) error
	Wait(ctx context.Context, id string, progress func(remote.Progress)) (*remote.Result, error)
	Cancel(ctx context.Context, id string) error
}

// submitWait bounds a job's submission (the bundle upload included): a
// queue that does not answer is the Agent call's error, not a hang.
const submitWait = 30 * time.Second

// cancelWait bounds how long a stopped remote agent waits for its worker
// to confirm (the task ends as killed either way).
const cancelWait = 10 * time.Second

// applyWait bounds checking and applying a returned patch.
const applyWait = 2 * time.Minute

// SpawnRemote starts an agent on a remote worker (isolation: "remote"):
// it submits the job — the definition, prompt, model, permission mode and
// the code at the caller's HEAD — and registers a background task of kind
// remote_agent that follows the job and notifies the parent when its
// result arrives. Errors are *Refusal: the flag is off, no NATS is
// configured or reachable, the caller is not in a git repository.
func (rt *Crew) SpawnRemote(ctx context.Context, parent *Agent, env *tool.Env, req Request) (*task.Task, error) {
	if req.Teammate == nil && !rt.flags().Bool(flags.RemoteAgents) { // a remote teammate was asked for by --teammate-mode
		return nil, refuse(`isolation: "remote" needs the remote_agents flag, which is off: turn it on with --flag remote_agents=on and give the session a NATS server (--nats URL), or leave out isolation to run the agent here.`)
	}
	if rt.cfg.Remote == nil {
		return nil, refuse(`isolation: "remote" needs a NATS server where workers take jobs: start the session with --nats URL. The agent was not started.`)
	}
	if req.Def == nil {
		return nil, refuse(`a fork cannot run remotely (it needs this conversation); give a subagent_type, or leave out isolation.`)
	}
	depth := parent.Info().Depth + 1
	if depth > rt.cfg.MaxDepth {
		return nil, refuse("Cannot start another agent: the nesting limit of %d levels is reached. Do this part of the work yourself.", rt.cfg.MaxDepth)
	}
	mode, err := ChildMode(parent.Mode(), req.Def, req.Mode)
	if err != nil {
		return nil, err
	}
	root, err := rt.remoteRoot(ctx)
	if err != nil {
		return nil, err
	}
	q, err := rt.cfg.Remote(ctx)
	if err != nil {
		return nil, refuse("The remote workers cannot be reached, so the agent was not started: %v", err)
	}
	model := agentdef.ResolveModel(rt.cfg.Getenv, req.Model, req.Def.Model, parent.Info().Model, rt.cfg.Aliases)
	d := req.Def
	job := &remote.Job{ID: remoteID(), Session: rt.cfg.SessionID, Description: req.Description, Prompt: req.Prompt, Model: model,
		Definition: remote.Definition{Name: d.Name, Description: d.Description, Prompt: d.Prompt, Tools: d.Tools,
			DisallowedTools: d.DisallowedTools, Model: model, PermissionMode: string(mode), MaxTurns: d.MaxTurns},
		Settings: remote.Settings{Mode: string(mode), MaxTurns: firstPositive(d.MaxTurns, rt.cfg.MaxTurns),
			WallTime: remote.Duration(rt.cfg.Deadline)}}
	acc := rt.account(parent)
	hold, share, err := remoteShare(ctx, acc, DefinitionCaps(d))
	if err != nil {
		return nil, err
	}
	job.Settings.MaxBudgetUSD = share
	spend := remoteSpend{acc: acc, hold: hold, share: share}
	job.Teammate = req.Teammate
	sctx, cancel := context.WithTimeout(ctx, submitWait)
	rev := "HEAD"
	if req.Teammate != nil {
		rev, err = rt.snapshot(sctx, root)
	}
	if err == nil {
		err = q.Submit(sctx, job, root, rev)
	}
	cancel()
	if err != nil {
		_ = hold.Settle(budget.Spend{})
		return nil, refuse("The remote agent could not be submitted: %v", err)
	}
	spec := task.Spec{ID: job.ID, Kind: task.KindRemoteAgent, Description: req.Description, Prompt: req.Prompt,
		SubagentType: d.Name, AgentID: job.ID, Name: req.Name, ToolUseID: env.ToolUseID,
		ParentAgentID: parent.ID(), Queue: parent.queue, Background: true}
	if req.Workflow != "" { // a workflow's step: the run reads its result
		spec.ParentID, spec.Queue = req.Workflow, nil
	}
	if req.Teammate != nil { // as an in-process teammate's: the team's state, not the task, keeps the lead waiting
		spec.Queue = nil
	}
	t, err := rt.cfg.Tasks.Start(ctx, spec, rt.remoteBody(q, job, root, spend))
	if err != nil {
		_ = hold.Settle(budget.Spend{})
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
		defer cancel()
		_ = q.Cancel(cctx, job.ID)
		return nil, refuse("Could not start the remote agent's task: %v", err)
	}
	return t, nil
}

// remoteShare is what a remote job may spend: half of what the caps of
// acc's chain leave (the other half stays for the lead and the agents
// here), at most its definition's dollar cap. It is held against those
// caps until the job's result says what it spent, so remote jobs running
// at once cannot cross a cap together. Zero with a nil hold: no cap.
func remoteShare(ctx context.Context, acc *budget.Account, def budget.Caps) (*budget.Hold, float64, error) {
	share := def.USD
	if acc == nil {
		return nil, share, nil
	}
	left, capped, err := acc.Remaining(ctx)
	if err != nil {
		return nil, 0, refuse("The spend ledger cannot be read, so the remote agent was not started: %v", err)
	}
	if capped {
		if left <= 0 {
			return nil, 0, refuse("The spend cap is reached, so the remote agent was not started: nothing is left to spend.")
		}
		if share <= 0 || left/2 < share {
			share = left / 2
		}
	}
	if share <= 0 {
		return nil, 0, nil
	}
	hold, err := acc.Reserve(ctx, budget.Spend{USD: share})
	if err != nil {
		return nil, 0, refuse("The remote agent was not started: %v", err)
	}
	return hold, share, nil
}

// remoteSpend is the account a remote job's spend is charged to, and
// what it holds there while the job runs.
type remoteSpend struct {
	acc   *budget.Account
	hold  *budget.Hold
	share float64
}

// settle charges the job's spend, as its result reports it, in place of
// the hold; with no result (the job was lost), the whole share counts as
// spent, since what it spent cannot be known. Without a hold (no cap)
// the spend is still charged, so a cap set on a later run counts it.
func (s remoteSpend) settle(res *remote.Result) {
	actual := budget.Spend{USD: s.share}
	if res != nil {
		actual = budget.Spend{Tokens: res.Usage.TotalTokens, USD: res.Usage.CostUSD}
	}
	if s.hold != nil {
		_ = s.hold.Settle(actual)
		return
	}
	if s.acc != nil && res != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cancelWait)
		defer cancel()
		_ = s.acc.Charge(ctx, actual)
	}
}

// remoteSpent tells the session what a remote job's result says it spent.
func (rt *Crew) remoteSpent(job *remote.Job, res *remote.Result) {
	if rt.cfg.RemoteSpent == nil || res == nil {
		return
	}
	u := llm.Usage{InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}
	rt.cfg.RemoteSpent(job.Model, u, res.Usage.CostUSD)
}

// RemoteModel is the model a remote agent of def below parent runs on
// (what SpawnRemote sends the worker).
func (rt *Crew) RemoteModel(parent *Agent, def *agentdef.Definition, model string) string {
	return agentdef.ResolveModel(rt.cfg.Getenv, model, def.Model, parent.Info().Model, rt.cfg.Aliases)
}

// snapshot is the commit a remote teammate starts from: root's HEAD with
// what is uncommitted on top (remote.Snapshot).
func (rt *Crew) snapshot(ctx context.Context, root string) (string, error) {
	m, err := rt.cfg.Worktrees(ctx)
	if err != nil {
		return "", err
	}
	return remote.Snapshot(ctx, m.Git(), root)
}

// remoteRoot is the repository whose HEAD a remote agent works on.
func (rt *Crew) remoteRoot(ctx context.Context) (string, error) {
	if rt.cfg.Worktrees == nil {
		return "", refuse(`isolation: "remote" sends the agent the repository's code, but this session has no git repository set up; run it in a git checkout.`)
	}
	m, err := rt.cfg.Worktrees(ctx)
	if err != nil {
		return "", refuse(`isolation: "remote" sends the agent the repository's code, which is not possible here: %v`, err)
	}
	return m.Root(), nil
}

// remoteBody follows a submitted job to its result: progress into the
// task, the patch onto a kept worktree, and the result as the task's
// outcome. When the task is stopped (TaskStop, the session's Close), the
// worker is told to stop the job.
func (rt *Crew) remoteBody(q RemoteQueue, job *remote.Job, root string, spend remoteSpend) task.RunFunc {
	return func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		var seenTools int
		var seenOut int64
		var started atomic.Bool
		progress := func(p remote.Progress) {
			started.Store(true)
			if p.Phase != "" {
				t.SetPhase(p.Phase)
			}
			if p.ToolUses > seenTools {
				seenTools = p.ToolUses
				t.RecordToolUse(p.Tool, p.Description)
			}
			if p.OutputTokens > seenOut || p.InputTokens > 0 {
				t.RecordUsage(llm.Usage{InputTokens: p.InputTokens, OutputTokens: max(p.OutputTokens-seenOut, 0)})
				seenOut = max(seenOut, p.OutputTokens)
			}
		}
		t.SetPhase("queued")
		wctx := ctx
		if rt.cfg.Deadline > 0 { // the agent timeout bounds a remote agent from submission to result
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, rt.cfg.Deadline)
			defer cancel()
		}
		res, err := q.Wait(wctx, job.ID, progress)
		if err == nil {
			spend.settle(res)
			rt.remoteSpent(job, res)
		} else {
			var final *remote.Result
			defer func() { spend.settle(final) }()
			if wctx.Err() == nil {
				return task.Outcome{}, fmt.Errorf("lost track of the remote job: %w", err)
			}
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
			defer cancel()
			// A job still in the queue stays cancelled (the cancellation is
			// stored); a running one's worker confirms, when it does in time.
			if cerr := q.Cancel(cctx, job.ID); cerr == nil && started.Load() {
				final, _ = q.Wait(cctx, job.ID, nil)
				rt.remoteSpent(job, final)
			} else if cerr == nil {
				final = &remote.Result{} // cancelled before a worker said it started: nothing spent
			}
			if ctx.Err() == nil {
				return task.Outcome{}, fmt.Errorf("no result within the agent timeout of %s (queued or running; is a worker serving this NATS server and prefix?); the job was cancelled", rt.cfg.Deadline)
			}
			return task.Outcome{}, ctx.Err()
		}
		// The result is in: applying it is not cut short by a stop, but is
		// bounded (git on a huge patch, a stuck file system).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyWait)
		defer cancel()
		return rt.remoteOutcome(actx, job, res, root)
	}
}

// remoteOutcome turns a job's result into the task's outcome.
func (rt *Crew) remoteOutcome(ctx context.Context, job *remote.Job, res *remote.Result, root string) (task.Outcome, error) {
	var notes []string
	if len(res.Capped) > 0 {
		notes = append(notes, "The worker's policy capped the job: "+strings.Join(res.Capped, "; ")+".")
	}
	switch res.Status {
	case remote.StatusCompleted:
	case remote.StatusCancelled:
		return task.Outcome{}, errors.New("the remote job was cancelled: " + res.Error)
	case remote.StatusRefused:
		return task.Outcome{}, fmt.Errorf("the remote worker %s refused the job: %s", res.Worker, res.Error)
	default:
		return task.Outcome{}, fmt.Errorf("the remote job failed on worker %s: %s%s", res.Worker, res.Error, noteSuffix(notes))
	}
	oc := task.Outcome{Text: res.Text, TotalTokens: res.Usage.TotalTokens, ToolUses: res.Usage.ToolUses}
	if len(res.Patch) > 0 {
		path, branch, note := rt.applyRemote(ctx, job, res.Patch, root)
		oc.WorktreePath, oc.WorktreeBranch = path, branch
		notes = append(notes, note)
	}
	if len(notes) > 0 {
		oc.Text = strings.TrimRight(oc.Text, "\n") + "\n\n" + strings.Join(notes, "\n")
	}
	return oc, nil
}

func noteSuffix(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return " " + strings.Join(notes, " ")
}

// applyRemote applies a returned patch to a kept worktree on branch
// cohort/remote-<id> at the job's base, unless it touches protected paths
// or does not apply: then it is kept aside for the user. The note says
// which happened.
func (rt *Crew) applyRemote(ctx context.Context, job *remote.Job, patch []byte, root string) (path, branch, note string) {
	aside := func(why string) (string, string, string) {
		p, err := remote.KeepAside(root, job.ID, patch)
		if err != nil {
			return "", "", fmt.Sprintf("The agent's changes were not applied (%s), and could not be kept aside either: %v.", why, err)
		}
		return "", "", fmt.Sprintf("The agent's changes were NOT applied: %s. The patch is kept at %s for the user to review.", why, p)
	}
	m, err := rt.cfg.Worktrees(ctx)
	if err != nil {
		return aside(err.Error())
	}
	bad, err := remote.CheckPatch(ctx, m.Git(), patch, rt.protectedInRepo(root))
	switch {
	case err != nil:
		return aside("the patch could not be read: " + err.Error())
	case len(bad) > 0:
		return aside("it touches protected paths (" + strings.Join(bad, ", ") + ")")
	}
	wt, err := m.CreateAt(ctx, "remote-"+job.ID, worktree.Owner{SessionID: rt.cfg.SessionID, AgentID: job.ID}, job.BaseCommit)
	if err != nil {
		return aside("no worktree for it: " + err.Error())
	}
	repo, err := m.Repo(wt.Path)
	if err == nil {
		err = remote.ApplyPatch(ctx, m.Git(), repo, patch)
	}
	if err != nil {
		_, _ = m.Remove(ctx, wt, true)
		return aside(err.Error())
	}
	out, err := m.Keep(ctx, wt)
	if err != nil {
		return out.Path, out.Branch, fmt.Sprintf("The agent's commits are on branch %s in %s (keeping the worktree reported: %v).", wt.Branch, wt.Path, err)
	}
	return out.Path, out.Branch, fmt.Sprintf("The agent's commits are on branch %s, checked out in %s.", out.Branch, out.Path)
}

// protectedInRepo reports the hook scripts of the session inside root,
// which a returned patch may not change either.
func (rt *Crew) protectedInRepo(root string) remote.ProtectedFunc {
	if rt.cfg.Permissions == nil {
		return nil
	}
	return func(rel string) bool { return rt.cfg.Permissions.ProtectedFile(root + "/" + rel) }
}

// remoteID is a remote task's id: r and eight of [0-9a-z], like every
// task id, and a valid job id.
func remoteID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := []byte{'r'}
	for _, c := range b {
		id = append(id, digits[int(c)%len(digits)])
	}
	return string(id)
}

func firstPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}
