package teammate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/worktree"
)

// Backends a teammate can run on.
const (
	BackendAuto      = "auto"
	BackendInProcess = "in-process"
	BackendTmux      = "tmux"
	// BackendRemote runs a teammate on a worker (cohort worker) of the
	// session's NATS server; its team must be on NATS (LeadConfig.NATS).
	BackendRemote = "remote"
)

// LeadConfig wires a Lead: the lead's side of a team, one per session.
type LeadConfig struct {
	Store *team.Store
	Tasks *task.Registry
	// Checker is the session's rule state; teammates get a child of it.
	Checker *permission.Checker
	// Prompter answers teammates' permission requests (the lead's
	// approver: headless policy or --permission-prompt-command).
	Prompter permission.Prompter
	// PlanApprover, when set, decides teammates' plans (a person, through
	// a terminal UI) instead of the lead model; an error leaves the
	// request to the lead model.
	PlanApprover func(ctx context.Context, from, plan string) (approve bool, feedback string, err error)
	SessionID    string
	// SessionsDir is where the sessions of this machine listen
	// ($COHORT_HOME/sessions): ListAgents lists the live ones. Empty lists
	// none.
	SessionsDir string
	// Peers lists the other sessions of this machine that answer on their
	// socket, with their names (bgsession), so that SendMessage's "to" can
	// name one; nil knows none by name (uds:<path> still reaches them).
	Peers func(ctx context.Context) []Peer
	// Bridge sends m to the session to names (its name or id) through
	// NATS and returns that session's label and the message id (package
	// bridge); nil when the session has no NATS server, and bridge:
	// addresses say so.
	Bridge func(ctx context.Context, to string, m mailbox.Message) (label, id string, err error)
	// ExpectIdleNotice is told of the session socket a SendMessage with
	// notify_when_idle asks for a notice from, before the message is sent
	// (the notice can come before the send returns); the send calls the
	// func it returns when the message was not delivered. nil: nobody
	// counts the notices (print mode waits for them, package assemble).
	ExpectIdleNotice func(socket string) (withdraw func())
	// LeadModel is the model a teammate without one of its own uses.
	LeadModel string
	// NATS is the NATS server whose JetStream holds the mailboxes, task
	// list and statuses of the teams this lead creates (team.CreateSpec);
	// empty keeps them in files.
	NATS string
	// Backend is auto, in-process or tmux.
	Backend string
	// Backends overrides Backend for named teammates (name → backend).
	Backends map[string]string
	// Process starts teammates in separate processes (the tmux backend);
	// nil makes every teammate in-process.
	Process ProcessBackend
	// ImplicitTeam is Claude Code 2.1.332's team model (the implicit_team
	// flag): the session leads one team, made when the first named agent
	// is spawned (ImplicitTeam), and Tools leaves out TeamCreate and
	// TeamDelete.
	ImplicitTeam bool

	PermissionTimeout time.Duration // a teammate's wait for the lead (default 5 min)
	ShutdownTimeout   time.Duration // wait for teammates to stop before forcing (default 10 s)
	Heartbeat         time.Duration // status heartbeat (default 1 s)
	DeadAfter         time.Duration // a heartbeat this old means dead (default 10 s)
	Now               func() time.Time
	Logf              func(format string, args ...any)
	// OnEvent observes team activity (the demo prints it).
	OnEvent func(Event)
}

// ProcessBackend starts a teammate as a separate process and reports on it.
type ProcessBackend interface {
	// Spawn starts `cohort teammate` for member and returns a handle id
	// (a tmux pane id) once the process runs; registration is awaited by
	// the lead. siblings names the batch of teammates spawned together
	// (crew.Crew.BatchName; "" for none), for the process's
	// NewFileGate.
	Spawn(ctx context.Context, teamName string, m team.Member, siblings string) (string, error)
	// Alive reports whether the handle's process still runs.
	Alive(ctx context.Context, handle string) bool
	// Kill stops it.
	Kill(ctx context.Context, handle string) error
}

// Lead is the lead's side of a team: the team it leads (one at a time),
// its inbox, the teammates it started. Safe for concurrent use.
type Lead struct {
	cfg    LeadConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// implicit serialises the making of the implicit team (implicit.go).
	implicit sync.Mutex

	mu   sync.Mutex
	team string
	// leadID and queue are the leading agent's id and queue, where the
	// team's messages arrive (set when it creates the team).
	leadID   string
	queue    *task.Queue
	mbox     mailbox.Transport
	stopTeam func() // ends the current team's readers and monitor
	// leadership is the team's lead lock, held while this session leads
	// it: the team is orphaned the moment the process ends, however it
	// ends.
	leadership *team.Leadership
	// claim says how the current team came to be led (team.Claim*).
	claim   string
	members map[string]*handle
	// retired are process teammates whose names a later spawn took: still
	// counted in ProcessMembers.
	retired  []*handle
	shutdown waiters
	changes  signal
	// fold holds idle notices until the lead has something to act on
	// (idlefold.go).
	fold idleFold
	// reserved are the teammates of a message added to the team file
	// before any of them starts (Reserve), by the call's tool_use id.
	reserved map[string]reservation
	// testHookSpawn, when set (tests), runs as a teammate's spawn starts.
	testHookSpawn func(name string)
}

// handle is a teammate this process started.
type handle struct {
	name    string
	inProc  *task.Task // in-process teammate's task
	process string     // process backend handle (tmux pane, remote job id)
	// backend runs process: the tmux backend, or remoteJobs.
	backend ProcessBackend
	dead    bool
	// lease is an isolated process teammate's worktree, finished by the
	// lead once the process is gone.
	lease *worktree.Lease
	// seen is a process teammate as last read from its status file (it
	// outlives the file: a team's deletion removes it).
	seen ProcessMember
}

// NewLead returns a Lead; Close stops what it started.
func NewLead(cfg LeadConfig) (*Lead, error) {
	if cfg.Store == nil || cfg.Tasks == nil || cfg.Checker == nil {
		return nil, errors.New("teammate: Store, Tasks and Checker are required")
	}
	if cfg.Prompter == nil {
		cfg.Prompter = permission.Headless{}
	}
	if cfg.Backend == "" {
		cfg.Backend = BackendAuto
	}
	if cfg.ShutdownTimeout == 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.DeadAfter == 0 {
		cfg.DeadAfter = DefaultDeadAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Lead{cfg: cfg, ctx: ctx, cancel: cancel, members: map[string]*handle{}}, nil
}

func (l *Lead) teamName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.team
}

func (l *Lead) emit(ev Event) {
	if l.cfg.OnEvent != nil {
		l.cfg.OnEvent(ev)
	}
}

// CreateTeam makes a team led by lead (the session's main agent) and
// starts reading the lead's inbox: what arrives goes to lead's queue. A
// session leads one team at a time. The name of an orphaned team (its
// lead's session ended) is taken over: the team is kept when this session
// led it before (a resumed session), replaced by a new one otherwise; a
// team a running session leads is refused (team.ErrLed).
func (l *Lead) CreateTeam(ctx context.Context, lead *crew.Agent, name, description string) (*team.Team, error) {
	l.mu.Lock()
	current := l.team
	l.mu.Unlock()
	if current != "" {
		return nil, fmt.Errorf("this session already leads team %q; delete it with TeamDelete before creating another", current)
	}
	c, err := l.cfg.Store.Claim(ctx, team.CreateSpec{Name: name, Description: description,
		LeadSessionID: l.cfg.SessionID, LeadModel: l.cfg.LeadModel, Cwd: lead.Info().Cwd, NATS: l.cfg.NATS})
	if err != nil {
		return nil, err
	}
	if c.How == team.ClaimAdopted {
		l.forgetGone(ctx, name)
	}
	if err := l.lead(c, lead); err != nil {
		c.Lead.Release()
		return nil, err
	}
	l.emit(Event{Kind: EventTeamCreated, Team: name, Text: description})
	return c.Team, nil
}

// Resume takes back the team this session led before it ended (a resumed
// session, --continue or --resume): the most recent orphaned team whose
// leadSessionId is this session's. It returns the team's name, or "" when
// there is none. Call it once the resumed lead agent exists, before its
// first turn.
func (l *Lead) Resume(ctx context.Context, lead *crew.Agent) (string, error) {
	names, err := l.cfg.Store.List()
	if err != nil {
		return "", err
	}
	var best *team.Team
	for _, n := range names {
		t, err := l.cfg.Store.Load(n)
		if err != nil || t.Config.LeadSessionID != l.cfg.SessionID {
			continue
		}
		if info, err := l.cfg.Store.LeadStatus(n); err != nil || info.State == team.Led {
			continue
		}
		if best == nil || t.Config.CreatedAt.After(best.Config.CreatedAt) {
			best = t
		}
	}
	if best == nil {
		return "", nil
	}
	if _, err := l.CreateTeam(ctx, lead, best.Name(), best.Config.Description); err != nil {
		return "", err
	}
	return best.Name(), nil
}

// forgetGone marks inactive the members of an adopted team whose processes
// no longer run (they died with the session that led them), so the team is
// not busy forever waiting for them.
func (l *Lead) forgetGone(ctx context.Context, name string) {
	st := Inspect(l.cfg.Store, name)
	for _, m := range st.Members {
		if !m.Active || m.Running {
			continue
		}
		if _, err := l.cfg.Store.SetActive(ctx, name, m.Name, false); err != nil {
			l.cfg.Logf("teammate: mark %s inactive: %v", m.Name, err)
		}
		markStatusDead(l.cfg.Store, name, m.Name, l.cfg.Now)
	}
}

// lead starts leading the claimed team: the lead's inbox reader, the
// monitor of process teammates, the status watch and the lead's own
// heartbeat (teammates in other processes watch it).
func (l *Lead) lead(c *team.Claimed, lead *crew.Agent) error {
	t, name := c.Team, c.Team.Name()
	mbox, err := l.cfg.Store.Mailbox(name)
	if err != nil {
		return err
	}
	r, err := mbox.OpenInbox(l.ctx, team.LeadName)
	if err != nil {
		return err
	}
	board, err := l.cfg.Store.Statuses(name)
	if err != nil {
		r.Close()
		return err
	}
	pub, err := newPublisher(board, team.LeadName, l.cfg.Now)
	if err != nil {
		r.Close()
		return fmt.Errorf("lead status file: %w", err)
	}
	_ = pub.set(StateBusy)
	tctx, cancel := context.WithCancel(l.ctx)
	var twg sync.WaitGroup
	l.mu.Lock()
	l.team, l.mbox, l.leadership, l.claim = name, mbox, c.Lead, c.How
	l.leadID, l.queue = lead.ID(), lead.Queue()
	l.stopTeam = func() {
		cancel()
		twg.Wait()
		_ = pub.set(StateStopped)
	}
	l.mu.Unlock()
	twg.Add(4)
	go func() {
		defer twg.Done()
		defer r.Close()
		receiveLoop(tctx, r, func(msgs []mailbox.Message) { l.leadDispatch(r, msgs) }, nil, l.cfg.Logf)
	}()
	go func() { defer twg.Done(); l.monitor(tctx, name) }()
	go func() { defer twg.Done(); l.watchStatus(tctx, t.Dir) }()
	go func() { defer twg.Done(); beat(tctx, pub, l.cfg.Heartbeat, l.cfg.Logf) }()
	return nil
}

// Close stops the lead's readers and monitors and gives up the lead of its
// team, which is then orphaned: the next session may take the name over or
// delete the team. Teammates are stopped by Shutdown (gracefully) or by the
// task registry (when the session ends).
func (l *Lead) Close() {
	l.cancel()
	l.mu.Lock()
	stop, name, ld := l.stopTeam, l.team, l.leadership
	l.stopTeam, l.leadership = nil, nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	if ld != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := l.cfg.Store.SetActive(ctx, name, team.LeadName, false); err != nil {
			l.cfg.Logf("teammate: mark the lead of %s inactive: %v", name, err)
		}
		cancel()
		ld.Release()
	}
	l.wg.Wait()
}

// leave forgets the current team (after TeamDelete): its readers and
// monitor stop and the lead lock is given up.
func (l *Lead) leave() {
	l.mu.Lock()
	stop, ld := l.stopTeam, l.leadership
	l.team, l.mbox, l.stopTeam, l.leadership, l.claim = "", nil, nil, nil, ""
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
	ld.Release()
}

// enqueueLead puts it in the queue of the agent leading the team, after
// the idle notices held until something woke the lead (idlefold.go).
func (l *Lead) enqueueLead(it task.Item) {
	held := l.takeHeld()
	l.mu.Lock()
	q := l.queue
	l.mu.Unlock()
	if q == nil {
		return
	}
	for _, h := range held {
		q.Enqueue(h)
	}
	q.Enqueue(it)
}

// Membership is the team an agent of this session belongs to or leads,
// and its name there: a teammate's from its record, the leading agent's
// from the team it created ("team-lead"). Empty outside any team.
func (l *Lead) Membership(env *tool.Env) (teamName, name string) {
	if env.Caller.Team != "" {
		return env.Caller.Team, env.Caller.Name
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.team != "" && env.Caller.ID == l.leadID {
		return l.team, team.LeadName
	}
	return "", ""
}

// isLead reports whether env's agent leads this session's team (or, before
// there is one, is the session's main agent).
func (l *Lead) isLead(env *tool.Env) bool {
	return env.Caller.Kind == tool.KindLead && env.Caller.Team == ""
}

// Mailbox returns the current team's mailbox, or nil.
func (l *Lead) Mailbox() mailbox.Transport {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mbox
}

// sendPayload writes a structured message from the lead to member.
func (l *Lead) sendPayload(ctx context.Context, to string, p mailbox.Payload) error {
	mbox := l.Mailbox()
	if mbox == nil {
		return errors.New("no team")
	}
	msg, err := mailbox.NewMessage(team.LeadName, to, p)
	if err != nil {
		return err
	}
	_, err = mbox.Append(ctx, msg)
	return err
}

// Scope wraps team-scoped tools (the shared task list) so that a call by
// the agent leading the team runs as the team's "team-lead": its record
// names no team (it created one; it did not join one), so the wrapper puts
// the membership into the call's Env. Other agents' calls pass unchanged.
func (l *Lead) Scope(ts []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(ts))
	for i, t := range ts {
		out[i] = scoped{Tool: t, l: l}
	}
	return out
}

type scoped struct {
	tool.Tool
	l *Lead
}

func (s scoped) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	if env != nil && env.Team == "" {
		if teamName, name := s.l.Membership(env); teamName != "" {
			e := *env
			e.Team, e.Caller.Name = teamName, name
			env = &e
		}
	}
	return s.Tool.Run(ctx, env, raw)
}
