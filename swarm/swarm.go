package swarm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool/isolation"
)

// Backends a teammate can run on.
const (
	BackendAuto      = "auto"
	BackendInProcess = "in-process"
	BackendTmux      = "tmux"
)

// Config wires a Swarm: the lead's side of a team, one per session.
type Config struct {
	Store   *team.Store
	Runtime *agenttool.Runtime
	Tasks   *task.Registry
	// Checker is the session's rule state; teammates get a child of it.
	Checker *permission.Checker
	// Prompter answers teammates' permission requests (the lead's
	// approver: headless policy or --permission-prompt-command).
	Prompter  permission.Prompter
	SessionID string
	// LeadID is the session lead's agent id; LeadQueue its queue, where
	// teammates' messages arrive. LeadModel is the lead's model.
	LeadID    string
	LeadQueue *task.Queue
	LeadModel string
	// Backend is auto, in-process or tmux.
	Backend string
	// Backends overrides Backend for named teammates (name → backend).
	Backends map[string]string
	// Process starts teammates in separate processes (the tmux backend);
	// nil makes every teammate in-process.
	Process ProcessBackend

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
	// the swarm.
	Spawn(ctx context.Context, teamName string, m team.Member) (string, error)
	// Alive reports whether the handle's process still runs.
	Alive(ctx context.Context, handle string) bool
	// Kill stops it.
	Kill(ctx context.Context, handle string) error
}

// Swarm is the lead's side of a team. Safe for concurrent use.
type Swarm struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	team     string
	mbox     *mailbox.Dir
	stopTeam func() // ends the current team's readers and monitor
	members  map[string]*handle
	checkers map[string]*modeHolder
	shutdown waiters
}

// handle is a teammate this process started.
type handle struct {
	name    string
	inProc  *task.Task // in-process teammate's task
	process string     // process backend handle (tmux pane)
	dead    bool
	// lease is an isolated process teammate's worktree, finished by the
	// lead once the process is gone.
	lease *isolation.Lease
}

// New returns a Swarm; Close stops what it started.
func New(cfg Config) (*Swarm, error) {
	if cfg.Store == nil || cfg.Tasks == nil || cfg.Checker == nil || cfg.LeadQueue == nil {
		return nil, errors.New("swarm: Store, Tasks, Checker and LeadQueue are required")
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
		cfg.Heartbeat = time.Second
	}
	if cfg.DeadAfter == 0 {
		cfg.DeadAfter = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Swarm{cfg: cfg, ctx: ctx, cancel: cancel, members: map[string]*handle{}, checkers: map[string]*modeHolder{}}, nil
}

func (sw *Swarm) teamName() string {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.team
}

func (sw *Swarm) emit(ev Event) {
	if sw.cfg.OnEvent != nil {
		sw.cfg.OnEvent(ev)
	}
}

// CreateTeam makes a team led by this session and starts reading the lead's
// inbox. A session leads one team at a time.
func (sw *Swarm) CreateTeam(ctx context.Context, name, description string) (*team.Team, error) {
	sw.mu.Lock()
	current := sw.team
	sw.mu.Unlock()
	if current != "" {
		return nil, fmt.Errorf("this session already leads team %q; delete it with TeamDelete before creating another", current)
	}
	t, err := sw.cfg.Store.Create(ctx, team.CreateSpec{Name: name, Description: description,
		LeadSessionID: sw.cfg.SessionID, LeadModel: sw.cfg.LeadModel, Cwd: sw.cfg.Runtime.Cwd()})
	if err != nil {
		return nil, err
	}
	mbox, err := sw.cfg.Store.Mailbox(name)
	if err != nil {
		return nil, err
	}
	r, err := mbox.OpenReader(team.LeadName)
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(sw.ctx)
	var twg sync.WaitGroup
	sw.mu.Lock()
	sw.team, sw.mbox = name, mbox
	sw.stopTeam = func() { cancel(); twg.Wait() }
	sw.mu.Unlock()
	twg.Add(2)
	go func() {
		defer twg.Done()
		defer r.Close()
		receiveLoop(tctx, r, func(msgs []mailbox.Message) { sw.leadDispatch(r, msgs) }, sw.cfg.Logf)
	}()
	go func() { defer twg.Done(); sw.monitor(tctx, name) }()
	sw.setLeadTeam(name, team.LeadName)
	sw.emit(Event{Kind: EventTeamCreated, Team: name, Text: description})
	return t, nil
}

// Bind attaches the runtime that builds teammates. The runtime's tools
// include the swarm's own, so it is made after the swarm; Bind must be
// called before any tool runs.
func (sw *Swarm) Bind(rt *agenttool.Runtime) { sw.cfg.Runtime = rt }

// Close stops the lead's readers and monitors. Teammates are stopped by
// Shutdown (gracefully) or by the task registry (when the session ends).
func (sw *Swarm) Close() {
	sw.cancel()
	sw.mu.Lock()
	stop := sw.stopTeam
	sw.mu.Unlock()
	if stop != nil {
		stop()
	}
	sw.wg.Wait()
}

// setLeadTeam tells the lead's engine which team it leads, so its
// team-scoped tools (the shared task list) find it.
func (sw *Swarm) setLeadTeam(teamName, name string) {
	if sw.cfg.Runtime == nil {
		return
	}
	if a, ok := sw.cfg.Runtime.Lookup(sw.cfg.LeadID); ok {
		if eng := a.Engine(); eng != nil {
			eng.SetTeam(teamName, name)
		}
	}
}

// leave forgets the current team (after TeamDelete): its readers and
// monitor stop.
func (sw *Swarm) leave() {
	sw.setLeadTeam("", "")
	sw.mu.Lock()
	stop := sw.stopTeam
	sw.team, sw.mbox, sw.stopTeam = "", nil, nil
	sw.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Mailbox returns the current team's mailbox, or nil.
func (sw *Swarm) Mailbox() *mailbox.Dir {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.mbox
}

// sendPayload writes a structured message from the lead to member.
func (sw *Swarm) sendPayload(ctx context.Context, to string, p mailbox.Payload) error {
	mbox := sw.Mailbox()
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
