package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/holdgate"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/skill"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/trace"
	"github.com/cohort-dev/cohort/transcript"
	"github.com/cohort-dev/cohort/worktree"
)

// Session is a session's parts, opened from a resolved Plan: the model,
// permissions, tasks, the crew and its lead (or the teammate this process
// runs), hooks, the team layer, worktrees, skills, MCP servers, memory,
// the sandbox, the remote queue, the trace. Package cohort's Session
// drives it; Close releases what Open opened, in reverse order.
type Session struct {
	*Plan
	id      string
	model   *openedModel
	cat     *agentdef.Catalog
	tasks   *task.Registry
	checker *permission.Checker
	rt      *crew.Crew
	lead    *crew.Agent
	resumed *transcript.Transcript
	closers []func()
	remote  *remoteConn
	bridge  *sessionBridge // bridge: addresses (bridge.go); nil without NATS
	trace   *trace.Writer
	hooks   *hook.Runner
	teams   *team.Store
	team    *teammate.Lead // the lead's side of a team
	teamsOn bool           // the agent_teams flag
	// workflowsOn: the agents have the Workflow tool (openWorkflows).
	workflowsOn bool
	socket      string                      // this session's uds: address, if listening
	inbound     inbound                     // messages from other sessions held for the turn's end
	held        *holdgate.Gate[heldMessage] // messages from other sessions waiting for a person (hold.go)
	mate        *teammate.Loop              // the teammate this session runs (Plan.Session.Teammate)
	wt          *worktree.Opener
	mcp         *mcp.Set                      // the session's MCP servers (mcp.go)
	skills      atomic.Pointer[skill.Catalog] // the skills the Skill tool offers (skills.go)
	sandbox     *sandbox.Sandbox
	cwds        heldCwds // the children's working directories (childcwd.go)
	// defHooks are the agent definitions' hooks read at start, by defKey;
	// defMissing their commands whose scripts did not exist then (hooks.go).
	defHooks   map[string]*hook.Set
	defMissing []hook.Missing
	// sandboxExcluded are the settings' excludedCommands, which run
	// outside the sandbox.
	sandboxExcluded []string
	// reaper starts the Bash commands that run outside the sandbox, so
	// that they die with the session (nil where it cannot be made).
	reaper *sandbox.Sandbox
	// promptRefused says why the Permissions.PromptCommand program is not
	// run (promptCommandJudged); "" when it answers the prompts.
	promptRefused string
	// statusLineOnce computes sl, the statusLine as judged once for the
	// session (sessionStatusLine).
	statusLineOnce sync.Once
	sl             statusLineSpec
	// topsEnd records, at Close, the state this session leaves at the top
	// of its working directories (internal/configtrust; trust.go).
	topsEnd func()
	quiet   sync.Once // reads COHORT_NOTIFY_COALESCE once (drive.go)
	quietD  time.Duration
	// noticeOnce reads COHORT_IDLE_NOTICE_WAIT once (notices.go).
	noticeOnce sync.Once
	noticeD    time.Duration
	// gitSnapshot waits for the session's git snapshot, taken while the
	// rest of the session is set up.
	gitSnapshot func() string
	// structured is the last turn's answer under Plan.Lead.JSONSchema
	// (schema.go).
	structured json.RawMessage
	mem        projectMemory  // the project's memory and its dreams (memory.go)
	usage      *counter       // usage and cost of every agent (usage.go)
	budget     *budget.Ledger // the spend caps (budget.go)
	ended      sync.Once      // the SessionEnd hooks ran
	typed      typedAhead     // what Send queued and the lead has not read
	cps        *checkpoints   // the files' checkpoints (checkpoints.go)
	// memoryFiles are the memory files read into the lead's opening
	// (InstructionsLoaded hooks, switch.go).
	memoryFiles []prompt.MemoryFile
	// TestHookLastLook, when set (tests), runs when the lead's drive has
	// found nothing more to wait for, before it ends (drive.go).
	TestHookLastLook func()
}

// Open opens the parts p describes, in an order that writes nothing under
// Cohort's home until the configuration has been checked: the session to
// resume, the model and the permissions first. A plan that cannot work is
// a *FieldError. On error everything opened so far is closed.
func Open(ctx context.Context, p *Plan) (s *Session, err error) {
	s = &Session{Plan: p, id: p.Session.ID, usage: newCounter()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if p.Session.Teammate != nil {
		return s, s.openTeammate(ctx)
	}
	return s, s.openLead(ctx)
}

// openLead opens a lead's session.
func (s *Session) openLead(ctx context.Context) (err error) {
	if err := s.loadResumed(); err != nil {
		return err
	}
	if err := s.openModel(s.modelSpec()); err != nil {
		return err
	}
	// The definitions before the permissions: their hooks' scripts are
	// protected paths (hookScripts).
	s.cat = s.LoadCatalog(ctx, s.KnownTools())
	if err := s.permissions(); err != nil {
		return err
	}
	if _, _, err := s.sessionCaps(); err != nil {
		return err
	}
	if err := s.remoteFromSettings(); err != nil {
		return &FieldError{Field: "Remote", Err: err}
	}
	if s.Lead.Agent != "" {
		if _, ok := s.cat.Get(s.Lead.Agent); !ok {
			return fieldErr("Agent", "Config.Agent %q: no such agent type (see cohort agents)", s.Lead.Agent)
		}
	}
	// From here on the session writes under Home.
	s.openMemory()
	if err := s.openTrace(); err != nil {
		return err
	}
	if err := s.openTasks(); err != nil {
		return err
	}
	if err := s.openBudget(ctx, true); err != nil {
		return err
	}
	s.openRemote() // closed after the tasks stop: a stopped remote task cancels its job
	s.closers = append(s.closers, func() { _ = s.StopTasks() })
	if err := s.openSandbox(ctx); err != nil {
		return err
	}
	s.startGitSnapshot(ctx) // after the sandbox, which confines its git
	s.openHooks()
	s.openStatusLine()
	s.promptCommandJudged()
	if err := s.openTeams(); err != nil {
		return err
	}
	s.openWorktrees(ctx)
	s.openCheckpoints(ctx)
	s.openSkills()
	s.openMCP(ctx)
	s.openWorkflows()
	if err := s.openCrew(ctx); err != nil {
		return err
	}
	if err := s.startLead(ctx); err != nil {
		return err
	}
	if err := s.resumeTeam(ctx); err != nil {
		return err
	}
	s.startAutoDream()
	s.notifyKilled()
	s.listen(ctx)
	return nil
}

// Close releases what Open opened, in reverse order. Safe to call more
// than once.
func (s *Session) Close() {
	// The turn's last checkpoint first: it reads the agents' worktrees,
	// which closing the crew removes, and it may still be writing to
	// stderr, which the closers below write to too.
	s.finishCheckpoints()
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
	s.cwds.release() // after every command of the children has ended
	if s.topsEnd != nil {
		s.topsEnd() // last: after everything that could write the tree
		s.topsEnd = nil
	}
}

// StopTasks stops every task still running and waits for them (bounded).
// Safe to call more than once.
func (s *Session) StopTasks() error {
	// The checkpoints asked for first: their git runs in the sandbox,
	// whose private folder is in the session's temporary directory, which
	// closing the registry removes (a print run whose API failed at once
	// warned "the sandbox could not be set up" for both checkpoints).
	s.waitCheckpoints()
	if s.tasks == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return s.tasks.Close(ctx)
}

// openTasks makes the session's task registry.
func (s *Session) openTasks() (err error) {
	s.tasks, err = task.NewRegistry(task.Config{Home: s.Process.Paths.CohortHome, SessionID: s.id, OnEvent: s.taskEvent})
	return err
}

// openTrace starts the trace file. It is closed after the task registry,
// so the last notifications are in it.
func (s *Session) openTrace() error {
	if s.Trace == "" {
		return nil
	}
	w, err := trace.Create(s.Trace, trace.Config{Session: s.id, Prices: s.model.prices})
	if err != nil {
		return fieldErr("Trace", "Config.Trace: %v", err)
	}
	s.trace = w
	s.closers = append(s.closers, func() {
		if err := w.Close(); err != nil {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: trace %s: %v\n", s.Trace, err)
		}
	})
	return nil
}

// engineEvent fans an agent event out to the session's usage, the
// program's sink and the trace.
func (s *Session) engineEvent(ev engine.Event) {
	switch ev.Kind {
	case engine.EventRequest:
		s.usage.requestStarted(ev.AgentID, ev.Time)
	case engine.EventAssistant:
		if ev.Response != nil {
			s.usage.count(ev.Response)
			if s.mate != nil {
				s.mate.ReportSpend(s.usage.spend())
			}
		}
		s.usage.responded(ev.AgentID, ev.Time)
	case engine.EventToolDone:
		if a := s.MainAgent(); a != nil && ev.Tool != nil && ev.Tool.Denied == "" && ev.AgentID == a.Info().ID {
			s.usage.ownToolDone()
		}
	}
	if s.Events.Engine != nil {
		s.Events.Engine(ev)
	}
	if s.trace != nil {
		s.trace.Engine(ev)
	}
}

func (s *Session) taskEvent(ev task.Event) {
	if s.Events.Task != nil {
		s.Events.Task(ev)
	}
	if s.trace != nil {
		s.trace.Task(ev)
	}
}

// teamEvent reports team activity to the program's sink.
func (s *Session) teamEvent(ev teammate.Event) {
	if s.Events.Team != nil {
		s.Events.Team(ev)
	}
}

// loadResumed forks the session to resume when asked (Resolve chose the
// fork's id) and loads the transcript it continues.
func (s *Session) loadResumed() error {
	sp := s.Plan.Session
	if sp.ForkFrom != "" {
		if err := transcript.Fork(s.Process.ProjectDir, sp.ForkFrom, s.id); err != nil {
			return fieldErr("ForkSession", "cannot fork session %s: %w", sp.ForkFrom, err)
		}
	}
	if sp.Resume == "" && !sp.Continue {
		return nil
	}
	t, err := transcript.Load(transcript.Path(s.Process.ProjectDir, s.id))
	if err != nil {
		return fieldErr("Resume", "cannot resume session %s: %w", s.id, err)
	}
	for _, p := range t.Problems {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", p)
	}
	s.resumed = t
	return nil
}

// permissions makes the session's permission checker.
func (s *Session) permissions() error {
	c, err := s.newChecker()
	if err != nil {
		return err
	}
	c.HideSecrets(s.Plan.secretDirs()...)
	s.checker = c
	return nil
}

// newChecker makes the permission checker the plan describes; problems in
// the settings' rules are warnings.
func (p *Plan) newChecker() (*permission.Checker, error) {
	mode := p.Permissions.Mode
	if mode != "" {
		if _, err := permission.ParseMode(string(mode)); err != nil {
			return nil, fieldErr("PermissionMode", "Config.PermissionMode: %v", err)
		}
	}
	var allow, deny []string
	for _, a := range p.Permissions.Allow {
		allow = append(allow, permission.SplitRules(a)...)
	}
	for _, d := range p.Permissions.Deny {
		deny = append(deny, permission.SplitRules(d)...)
	}
	c, err := permission.New(permission.Config{Env: p.Process.Paths, Settings: p.Settings.Loaded, Mode: mode,
		Allow: allow, Deny: deny, AdditionalDirs: p.Permissions.AddDirs, Persist: p.persister(),
		Protected: p.checkerProtected(), Unsandboxed: p.sandboxConfig().unsandboxed})
	if err != nil {
		return nil, &FieldError{Field: "PermissionMode", Err: err}
	}
	for _, prob := range c.Problems() {
		fmt.Fprintf(p.Process.Stderr, "cohort: warning: %v\n", prob)
	}
	return c, nil
}

func (s *Session) prompter() permission.Prompter {
	if s.Permissions.Ask != nil {
		return canUse{s}
	}
	if s.Permissions.PromptCommand != "" {
		if s.promptRefused != "" {
			return promptDenied(s.promptRefused)
		}
		return &permission.Command{Command: s.Permissions.PromptCommand, Dir: s.Process.Cwd}
	}
	return permission.Headless{}
}

// openCrew makes the crew that builds and runs every agent.
func (s *Session) openCrew(ctx context.Context) error {
	cat := s.cat
	memory, err := prompt.LoadMemory(prompt.MemoryConfig{
		UserDirs: []string{s.Process.Paths.CohortHome, filepath.Join(s.Process.Paths.Home, ".claude")},
		Root:     s.Process.ProjectRoot, Cwd: s.Process.Cwd, Denied: s.deniedRead,
	})
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", err)
	}
	s.memoryFiles = memory
	s.rt, err = crew.New(crew.Config{
		Model: s.model.model, Catalog: cat, Flags: s.Settings.Set, Tools: s.tools, Tasks: s.tasks, Extras: s.agentExtras,
		Permissions: s.checker,
		Bounds:      s.bounds(),
		Prompter:    s.prompter(),
		// A CanUseTool callback is a person's (or a program's) answer:
		// Notification hooks tell them a prompt waits, as Claude Code's
		// permission_prompt does. Print mode asks no one.
		NotifyPrompts: s.Permissions.Ask != nil,
		Transcripts:   s.transcriptFor,
		Hooks:         s.engineHooks,
		Reopened:      s.reopened,
		Sink:          s.engineEvent,
		Worktrees:     s.worktrees(),
		Remote:        s.remoteQueue(),
		MaxConcurrent: s.Agents.MaxConcurrent,
		MaxTurns:      s.Agents.MaxTurns,
		Deadline:      s.Agents.Timeout,
		EvictAfter:    s.Agents.EvictAfter,
		Index:         transcript.RetiredIndexPath(s.Process.ProjectDir, s.id),
		MaxDepth:      s.Agents.MaxDepth,
		SessionID:     s.id,
		Cwd:           s.Process.Cwd,
		Environment: prompt.Environment{Platform: goruntime.GOOS, Date: time.Now().Format(time.DateOnly),
			IsGitRepo: s.Process.ProjectRoot != s.Process.Cwd || isGitDir(s.Process.Cwd)},
		Memory:      memory,
		AgentMemory: s.agentMemory,
		GitSnapshot: s.gitSnapshot(),
		Getenv:      s.Process.Getenv,
		ReadOnly:    readOnlyTools(s.tools(nil)),
		CheckCwd:    s.checkCwd,
		Compaction:  s.compaction(),
		Prices:      s.model.prices,
		Budget:      s.budget,
		RemoteSpent: s.usage.charge,
		Aliases:     s.model.aliases,
		Proactive:   s.Lead.Proactive || s.settingBool("proactive"),
	})
	if err != nil {
		return err
	}
	if s.wt != nil {
		s.closers = append(s.closers, func() { s.closeWorktrees(s.rt.Workspaces()) })
	}
	return nil
}

// transcriptFor opens a subagent's sidechain transcript.
func (s *Session) transcriptFor(a *crew.Agent) (engine.Recorder, func() error, error) {
	info := a.Info()
	if info.Depth == 0 {
		return nil, nil, nil // the lead's transcript is opened by startLead
	}
	if info.Kind == tool.KindDream {
		return nil, nil, nil // a dream's turns are no session to review later
	}
	w, err := transcript.Create(transcript.WriterConfig{Path: transcript.SidechainPath(s.Process.ProjectDir, s.id, info.ID),
		SessionID: s.id, AgentID: info.ID, Sidechain: true, Cwd: info.Cwd})
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}

func (s *Session) startLead(ctx context.Context) error {
	w, err := transcript.Create(transcript.WriterConfig{Path: transcript.Path(s.Process.ProjectDir, s.id), SessionID: s.id, Cwd: s.Process.Cwd})
	if err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = w.Close() })
	if s.resumed != nil && s.resumed.Unrecorded != nil {
		// The repair of the last turn goes into the file, so the next
		// resume finds nothing to repair there (and any number work).
		if err := w.Append(transcript.Entry{Type: transcript.TypeUser, Message: s.resumed.Unrecorded, Origin: transcript.OriginToolResult}); err != nil {
			return err
		}
	}
	cfg := crew.LeadConfig{Model: s.model.name, MaxTurns: s.Lead.MaxTurns, Recorder: w,
		Chain: prompt.Chain{Custom: s.Lead.SystemPrompt, Append: s.Lead.AppendSystemPrompt}}
	if n := s.Lead.ThinkingTokens; n > 0 {
		cfg.Thinking = &llm.Thinking{BudgetTokens: n}
	}
	if s.Lead.Agent != "" {
		def, ok := s.rt.Catalog().Get(s.Lead.Agent)
		if !ok {
			return fieldErr("Agent", "Config.Agent %q: no such agent type (see cohort agents)", s.Lead.Agent)
		}
		cfg.Def = def
	}
	if s.resumed != nil {
		cfg.History = s.resumed.Messages
		if s.resumed.Init != nil {
			cfg.System = s.resumed.Init.System
			if s.Model.Spec == "" && s.resumed.Init.Model != "" {
				cfg.Model = s.resumed.Init.Model
			}
		}
	}
	s.lead, err = s.rt.NewLead(ctx, cfg)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, s.lead.Close)
	if s.resumed == nil {
		return w.Append(transcript.Entry{Type: transcript.TypeSystem, Subtype: transcript.SubtypeInit,
			System: s.lead.System(), Model: s.lead.Info().Model, Tools: s.lead.ToolNames()})
	}
	return nil
}

// readOnlyTools classifies tools for plan-mode pools by their traits on an
// empty input; Bash counts as read-only because plan mode's permission check
// refuses its mutating commands.
func readOnlyTools(tools []tool.Tool) func(string) bool {
	ro := map[string]bool{"Bash": true}
	for _, t := range tools {
		if t.Traits(json.RawMessage(`{}`)).ReadOnly {
			ro[t.Def().Name] = true
		}
	}
	return func(name string) bool { return ro[name] }
}

// startGitSnapshot takes the session's git snapshot (four git processes in
// a repository) in the background, so that it overlaps the rest of the
// set-up; outside git it runs none.
func (s *Session) startGitSnapshot(ctx context.Context) {
	if !s.Process.InGit {
		s.gitSnapshot = func() string { return "" }
		return
	}
	repo, err := gitrepo.Find(s.Process.Cwd)
	if err != nil {
		// A .git entry that leads nowhere or is no git file: said with
		// the file and what to do; Cohort runs no git of its own there.
		if !errors.Is(err, gitrepo.ErrNotRepository) {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v; until then Cohort runs no git of its own on this repository\n", err)
		}
		s.gitSnapshot = func() string { return "" }
		return
	}
	for _, p := range repo.Problems {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", p)
	}
	done := make(chan string, 1)
	go func() { done <- prompt.GitSnapshot(ctx, s.git(), repo, s.Process.Cwd, s.deniedRead) }()
	s.gitSnapshot = sync.OnceValue(func() string { return <-done })
	s.closers = append(s.closers, func() { s.gitSnapshot() }) // never leave it running
}

func isGitDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}
