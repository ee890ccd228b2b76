package teammate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// Config describes one teammate to run in this process.
type Config struct {
	Team    string
	Member  team.Member // name, color, prompt, type, model, mode, plan
	Store   *team.Store
	Runtime *crew.Crew
	Def     *agentdef.Definition
	// ParentID is the agent that spawned it (the lead), when in this
	// process.
	ParentID string
	// LeadModel is the model a teammate without one of its own uses.
	LeadModel string
	// Checker is the teammate's rule state; its mode is set from Member.
	Checker *permission.Checker
	// PermissionTimeout bounds a wait for the lead's answer (default 5 min);
	// no answer denies.
	PermissionTimeout time.Duration
	// PlanTimeout bounds a wait for plan approval (default 30 min).
	PlanTimeout time.Duration
	Heartbeat   time.Duration // default 1 s
	Now         func() time.Time
	Logf        func(format string, args ...any)
	OnEvent     func(Event)
	// SpawnedBy is the Agent call that spawned it in this process: siblings
	// of one message wait for the first one's first token (crew.Batch).
	SpawnedBy string
	// Siblings is the gate of a teammate in a process of its own that was
	// spawned with others (NewFileGate); nil for none.
	Siblings crew.SiblingGate
	// Guard confines an isolated teammate to its worktree (its Member.Cwd
	// lies inside it).
	Guard tool.WriteGuard
	// LeadGoneGrace is how long a teammate in its own process (ParentID
	// empty) whose lead is gone lets its turn run on before cancelling it
	// (default DefaultLeadGoneGrace); it then records that it stopped and
	// Run returns ErrLeadGone.
	LeadGoneGrace time.Duration
	// LeadDeadAfter is how old the lead's heartbeat may grow before a
	// teammate of a team on NATS counts the lead gone (default 10 s): on
	// another machine the lead lock cannot be seen, so its heartbeat on
	// the status board is what tells.
	LeadDeadAfter time.Duration
	// PrivateTmuxDir is where the lead's private tmux servers have their
	// sockets (default: the tmux directory beside the teams root,
	// $COHORT_HOME/tmux, as the CLI makes them). A teammate whose lead is
	// gone and that runs in such a server takes it down as the last one out.
	PrivateTmuxDir string
	// Getenv reads this process's environment ($TMUX; default os.Getenv).
	Getenv func(string) string
}

// Loop is one running team member: it turns the messages of its inbox
// into pieces of work for its agent. Start registers it; Run runs it.
type Loop struct {
	cfg       Config
	name      string
	mbox      mailbox.Transport
	reader    mailbox.Inbox
	status    *publisher
	chat      *chatQueue
	control   chan mailbox.Message
	deaf      atomic.Pointer[error] // why the inbox can no longer receive (Run's error)
	replies   waiters
	agent     *crew.Agent
	lead      *leadWatch
	closeOnce sync.Once
	// tokens and toolUses add up what its turns used, for its task's
	// notification (Used).
	tokens, toolUses atomic.Int64
	// testHookTaken, when set (tests), runs after the teammate has taken
	// its next messages and before it works on them.
	testHookTaken func()
}

func (c *Config) defaults() {
	if c.PermissionTimeout == 0 {
		c.PermissionTimeout = 5 * time.Minute
	}
	if c.PlanTimeout == 0 {
		c.PlanTimeout = 30 * time.Minute
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.LeadDeadAfter == 0 {
		c.LeadDeadAfter = DefaultDeadAfter
	}
	if c.LeadGoneGrace == 0 {
		c.LeadGoneGrace = DefaultLeadGoneGrace
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.PrivateTmuxDir == "" && c.Store != nil {
		c.PrivateTmuxDir = filepath.Join(filepath.Dir(c.Store.Root()), "tmux")
	}
}

// Start registers a teammate: it takes its inbox (only one reader
// may hold it, in any process), publishes its status and builds its agent.
// Spawning is acknowledged only once this has returned.
func Start(ctx context.Context, cfg Config) (*Loop, error) {
	cfg.defaults()
	m := cfg.Member
	tm := &Loop{cfg: cfg, name: m.Name, control: make(chan mailbox.Message, 4), lead: newLeadWatch()}
	var err error
	if tm.mbox, err = cfg.Store.Mailbox(cfg.Team); err != nil {
		return nil, err
	}
	if tm.reader, err = tm.mbox.OpenInbox(ctx, m.Name); err != nil {
		return nil, fmt.Errorf("teammate %s: %w", m.Name, err)
	}
	board, err := cfg.Store.Statuses(cfg.Team)
	if err != nil {
		tm.reader.Close()
		return nil, err
	}
	if tm.status, err = newPublisher(board, m.Name, cfg.Now); err != nil {
		tm.reader.Close()
		return nil, fmt.Errorf("teammate %s: status file: %w", m.Name, err)
	}
	tm.chat = newChatQueue(func(ids []string) {
		if err := tm.reader.Ack(context.Background(), ids...); err != nil {
			cfg.Logf("teammate %s: acknowledge: %v", m.Name, err)
		}
	})
	if err := tm.build(ctx); err != nil {
		tm.reader.Close()
		return nil, err
	}
	return tm, nil
}

// close releases what Start took (the inbox, the agent's transcript); Run
// does it when it returns. Safe to call more than once.
func (tm *Loop) close() {
	tm.closeOnce.Do(func() {
		tm.reader.Close()
		tm.agent.Close()
	})
}

// Close releases what Start took when Run is not called (Run releases it
// itself). Safe to call more than once.
func (tm *Loop) Close() { tm.close() }

// Agent returns the teammate's agent.
func (tm *Loop) Agent() *crew.Agent { return tm.agent }

// build prepares the teammate's agent: its pool (plan-mode when a plan must
// be approved first), system prompt with its role, permission state (its
// "ask" decisions go to the lead) and plan approver (the lead).
func (tm *Loop) build(ctx context.Context) error {
	m := tm.cfg.Member
	mode := permission.Mode(m.Mode)
	if m.PlanModeRequired {
		mode = permission.ModePlan
	}
	if mode == "" {
		mode = tm.cfg.Checker.Mode()
	}
	if err := tm.cfg.Checker.SetMode(mode); err != nil {
		return fmt.Errorf("teammate %s: mode %q: %w", m.Name, mode, err)
	}
	a, err := tm.cfg.Runtime.NewAgent(ctx, crew.AgentSpec{
		ID: m.AgentID, Name: m.Name, Team: tm.cfg.Team, Kind: tool.KindTeammate, Color: m.Color,
		Def: tm.cfg.Def, Role: agentdef.RoleTeammate, Depth: 1, Model: m.Model, ParentModel: tm.cfg.LeadModel,
		Mode: mode, Cwd: m.Cwd, ParentID: tm.cfg.ParentID, Append: roleNote(tm.cfg.Team, m),
		Checker: tm.cfg.Checker, Prompter: leadPrompter{tm}, PlanApprover: tm.approvePlan,
		Inbox: tm.chat, Guard: tm.cfg.Guard, SpawnedBy: tm.cfg.SpawnedBy, Siblings: tm.cfg.Siblings,
	})
	if err != nil {
		return fmt.Errorf("teammate %s: %w", m.Name, err)
	}
	tm.agent = a
	return nil
}

// roleNote tells a teammate how the team works: the same for every member
// (who it is goes in its first message, identity).
func roleNote(_ string, m team.Member) string {
	if m.PlanModeRequired {
		return prompt.TeammateRole + prompt.TeammatePlanMode
	}
	return prompt.TeammateRole
}

// identity opens a teammate's first message: its name, team and lead.
func identity(teamName string, m team.Member) string {
	return fmt.Sprintf("You are %s, a member of team %q; your lead is %s.", m.Name, teamName, team.LeadName)
}

// Used returns the tokens and the tool calls the teammate's turns have
// used so far. Safe for concurrent use.
func (tm *Loop) Used() (tokens int64, toolUses int) {
	return tm.tokens.Load(), int(tm.toolUses.Load())
}

// Name returns the teammate's name.
func (tm *Loop) Name() string { return tm.name }

// ReportSpend sets the usage and cost this teammate publishes in its
// status file (the session running it calls it after each response), for
// a lead in another process to count.
func (tm *Loop) ReportSpend(s Spend) { tm.status.setSpend(s) }

// Run runs the teammate until it is shut down or ctx ends. It starts with
// the member's spawn prompt, then takes a turn per batch of messages. A
// teammate in its own process also ends when its lead is gone (ErrLeadGone):
// it finishes its turn (cancelling it after Config.LeadGoneGrace), records
// that it stopped and why, and, as the last teammate of a private tmux
// server, takes the server down.
func (tm *Loop) Run(ctx context.Context) error {
	err := tm.run(ctx)
	if d := tm.deaf.Load(); d != nil && ctx.Err() == nil {
		err = fmt.Errorf("teammate %s: %w", tm.name, *d)
	}
	if errors.Is(err, ErrLeadGone) {
		tm.leaveTmux()
	}
	return err
}

func (tm *Loop) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// turnCtx is ctx, also cancelled once the lead is gone and its grace
	// has passed.
	turnCtx, cancelTurn := context.WithCancelCause(ctx)
	defer cancelTurn(nil)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		tm.close()
	}()
	wg.Add(2)
	go func() {
		defer wg.Done()
		receiveLoop(ctx, tm.reader, tm.dispatch, func(err error) {
			// Nothing reaches this teammate any more (not even a
			// shutdown request): it ends, so that its lead, told by the
			// inbox, can spawn it again.
			tm.deaf.Store(&err)
			cancel()
		}, tm.cfg.Logf)
	}()
	go func() { defer wg.Done(); tm.heartbeat(ctx) }()
	if tm.cfg.ParentID == "" {
		wg.Add(1)
		go func() { defer wg.Done(); tm.watchLead(ctx, cancelTurn) }()
	}

	rt := tm.cfg.Runtime
	blocks := append(append([]llm.Block(nil), tm.agent.Opening()...), llm.Text(identity(tm.cfg.Team, tm.cfg.Member)+"\n\n"+tm.cfg.Member.Prompt))
	origin := ""
	idleBlocks := 0
	for first := true; ; first = false {
		_ = tm.status.set(StateBusy)
		if tm.testHookTaken != nil {
			tm.testHookTaken()
		}
		res, err := rt.Activate(turnCtx, tm.agent, blocks, origin, first)
		if res != nil {
			tm.tokens.Add(res.Usage.Total())
			tm.toolUses.Add(int64(res.ToolUses))
		}
		if tm.lead.isGone() {
			return tm.orphaned()
		}
		if ctx.Err() != nil {
			_ = tm.status.set(StateStopped)
			return ctx.Err()
		}
		idle := mailbox.IdleNotification{IdleReason: "available"}
		if err != nil {
			idle.IdleReason, idle.FailureReason = "failed", err.Error()
		} else if res != nil && res.Stop == engine.StopBudget {
			// Capped: the lead is told which cap and what was spent.
			idle.IdleReason, idle.Summary = "capped", crew.CapNote(res)
		} else if res != nil {
			idle.Summary = clip.String(strings.TrimSpace(res.Text), 300)
		}
		if tm.chat.len() > 0 {
			blocks, origin = tm.chat.Drain(), transcript.OriginTeammate
			continue
		}
		if reason, again := tm.idleHook(ctx, &idleBlocks); again {
			blocks, origin = []llm.Block{llm.Text("<system-reminder>\nA TeammateIdle hook asks you to keep working: " + reason + "\n</system-reminder>")}, transcript.OriginSystem
			continue
		}
		idleBlocks = 0
		// Notify before publishing idle: the lead treats an idle teammate
		// with an empty inbox as done, so the notification must already
		// be in the lead's inbox by then.
		tm.notifyIdle(ctx, idle)
		_ = tm.status.set(StateIdle)
		var stop bool
		if blocks, stop, err = tm.awaitWork(ctx); stop {
			if tm.lead.isGone() {
				return tm.orphaned()
			}
			return err
		}
		origin = transcript.OriginTeammate
	}
}

// awaitWork waits, idle, for the next messages: it publishes busy before it
// takes them from the queue (acknowledging them in the mailbox), so that
// from the moment a message is appended until the turn that reads it ends,
// the lead's quiet check sees it in flight — pending in the inbox, then the
// teammate busy. stop is set when the teammate is shut down or stopped.
func (tm *Loop) awaitWork(ctx context.Context) (blocks []llm.Block, stop bool, err error) {
	for {
		select {
		case <-tm.chat.Ready():
			_ = tm.status.set(StateBusy)
			return tm.chat.Drain(), false, nil
		case m := <-tm.control:
			stop := tm.shutdown(ctx, m)
			tm.ack(context.Background(), m)
			if stop {
				_ = tm.status.set(StateStopped)
				return nil, true, nil
			}
		case <-tm.lead.gone:
			return nil, true, nil
		case <-ctx.Done():
			_ = tm.status.set(StateStopped)
			return nil, true, ctx.Err()
		}
	}
}

// maxIdleBlocks bounds how often TeammateIdle hooks may keep a teammate
// working before it goes idle anyway.
const maxIdleBlocks = 3

// idleHook fires TeammateIdle before the teammate goes idle; a hook that
// blocks keeps it working with the hook's reason.
func (tm *Loop) idleHook(ctx context.Context, count *int) (string, bool) {
	h, ok := tm.agent.Hooks().(hook.TeammateHooks)
	if !ok || *count >= maxIdleBlocks {
		return "", false
	}
	out := h.TeammateIdle(ctx, tm.name, tm.cfg.Team)
	if !out.Block || out.Stop {
		return "", false
	}
	*count++
	return out.Reason, true
}

func (tm *Loop) notifyIdle(ctx context.Context, idle mailbox.IdleNotification) {
	msg, err := mailbox.NewMessage(tm.name, team.LeadName, idle)
	if err != nil {
		return
	}
	msg.Color = tm.cfg.Member.Color
	if _, err := tm.mbox.Append(ctx, msg); err != nil {
		tm.cfg.Logf("teammate %s: idle notification: %v", tm.name, err)
	}
	tm.emit(Event{Kind: EventIdle, Team: tm.cfg.Team, From: tm.name, Text: idle.Summary})
}

// dispatch sorts a batch from the inbox: chat for the model, responses for
// the goroutines waiting on them, shutdown requests for the loop.
func (tm *Loop) dispatch(msgs []mailbox.Message) {
	for _, m := range msgs {
		tm.dispatchWith(m, func(m mailbox.Message) { tm.ack(context.Background(), m) })
	}
}

// dispatchWith handles one message; ack acknowledges a message handled
// here (chat is acknowledged later, when the engine takes it).
func (tm *Loop) dispatchWith(m mailbox.Message, ack func(mailbox.Message)) {
	ctx := context.Background()
	switch m.Type {
	case mailbox.TypeShutdownRequest:
		// A request stays unacknowledged until it is answered: the lead's
		// quiet check (Lead.Busy) counts it pending in this inbox until the
		// answer is in the lead's, so the lead cannot end between the two.
		if m.From != team.LeadName {
			ack(m)
			tm.cfg.Logf("teammate %s: shutdown request from %s ignored: only the lead may ask", tm.name, m.From)
			return
		}
		if tm.status.state() == StateBusy {
			tm.refuseShutdown(ctx, m)
			ack(m)
			return
		}
		select {
		case tm.control <- m:
			// awaitWork answers it, then acknowledges it.
		default:
			ack(m)
		}
	case mailbox.TypePermissionResponse, mailbox.TypePlanApprovalResponse:
		ack(m)
		if m.From != team.LeadName {
			tm.cfg.Logf("teammate %s: %s from %s dropped: only the lead may answer", tm.name, m.Type, m.From)
			return
		}
		if ok, _ := tm.replies.deliver(requestID(m), m); !ok {
			tm.cfg.Logf("teammate %s: %s for an unknown request dropped", tm.name, m.Type)
		}
	default:
		tm.chat.push(m)
		tm.emit(Event{Kind: EventDelivered, Team: tm.cfg.Team, From: m.From, To: tm.name, Text: m.Text, Detail: string(m.Type)})
	}
}

func (tm *Loop) ack(ctx context.Context, m mailbox.Message) {
	if err := tm.reader.Ack(ctx, m.ID); err != nil {
		tm.cfg.Logf("teammate %s: acknowledge %s: %v", tm.name, m.ID, err)
	}
}

func (tm *Loop) refuseShutdown(ctx context.Context, m mailbox.Message) {
	p, _ := m.Payload()
	req, ok := p.(mailbox.ShutdownRequest)
	if !ok {
		return
	}
	tm.reply(ctx, mailbox.ShutdownResponse{RequestID: req.RequestID, Approve: false,
		Reason: "busy with a turn; ask again once I am idle"})
}

// shutdown approves an idle teammate's shutdown request.
func (tm *Loop) shutdown(ctx context.Context, m mailbox.Message) bool {
	p, err := m.Payload()
	req, ok := p.(mailbox.ShutdownRequest)
	if err != nil || !ok {
		return false
	}
	tm.reply(ctx, mailbox.ShutdownResponse{RequestID: req.RequestID, Approve: true})
	tm.emit(Event{Kind: EventShutdown, Team: tm.cfg.Team, From: tm.name, Text: req.Reason})
	return true
}

func (tm *Loop) reply(ctx context.Context, p mailbox.Payload) {
	msg, err := mailbox.NewMessage(tm.name, team.LeadName, p)
	if err != nil {
		return
	}
	msg.Color = tm.cfg.Member.Color
	if _, err := tm.mbox.Append(ctx, msg); err != nil {
		tm.cfg.Logf("teammate %s: reply: %v", tm.name, err)
	}
}

func (tm *Loop) heartbeat(ctx context.Context) {
	beat(ctx, tm.status, tm.cfg.Heartbeat, func(format string, args ...any) {
		tm.cfg.Logf("teammate "+tm.name+": "+format, args...)
	})
}

// beat refreshes pub's heartbeat every interval until ctx ends.
func beat(ctx context.Context, pub *publisher, every time.Duration, logf func(string, ...any)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := pub.beat(); err != nil {
				logf("heartbeat: %v", err)
			}
		}
	}
}

func (tm *Loop) emit(ev Event) {
	if tm.cfg.OnEvent != nil {
		tm.cfg.OnEvent(ev)
	}
}

// ask sends a request to the lead and waits for the response with the same
// request id, up to timeout.
func (tm *Loop) ask(ctx context.Context, id string, p mailbox.Payload, timeout time.Duration) (mailbox.Message, error) {
	ch := tm.replies.add(id, team.LeadName)
	defer tm.replies.remove(id)
	msg, err := mailbox.NewMessage(tm.name, team.LeadName, p)
	if err != nil {
		return mailbox.Message{}, err
	}
	msg.Color = tm.cfg.Member.Color
	if _, err := tm.mbox.Append(ctx, msg); err != nil {
		return mailbox.Message{}, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-ch:
		return m, nil
	case <-t.C:
		return mailbox.Message{}, errNoAnswer
	case <-ctx.Done():
		return mailbox.Message{}, ctx.Err()
	}
}

var errNoAnswer = errors.New("no answer from the lead in time")
