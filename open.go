package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/skill"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/trace"
	"github.com/cohort-dev/cohort/transcript"
	"github.com/cohort-dev/cohort/worktree"
)

// base is what every command needs: paths, settings and flags.
type base struct {
	inv         *invocation
	o           *options
	cwd         string
	env         settings.Env
	settings    *settings.Settings
	flags       *flags.Set
	projectRoot string // canonical repo root, or the cwd outside git
	inGit       bool   // a .git entry is in the cwd or above it
	projectDir  string // $COHORT_HOME/projects/{slug}
}

// loadBase resolves the cwd, settings and flags.
func loadBase(ctx context.Context, inv *invocation, o *options) (*base, error) {
	cwd := o.cwd
	if cwd == "" {
		wd, err := inv.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return nil, configErr("Dir", "%s is not a directory; give the project directory (--cwd)", cwd)
	}
	env, err := settings.NewEnv(inv.Getenv, cwd)
	if err != nil {
		return nil, configErr("Home", "%v", err)
	}
	if o.settingSources != nil {
		env.Scopes = []settings.Scope{}
		for _, src := range o.settingSources {
			env.Scopes = append(env.Scopes, settings.Scope(src))
		}
	}
	b := &base{inv: inv, o: o, cwd: cwd, env: env}
	b.settings = settings.Load(env)
	if err := b.addSettings(o.settings); err != nil {
		return nil, err
	}
	for _, p := range b.settings.Problems {
		fmt.Fprintf(inv.Stderr, "cohort: warning: %v\n", p)
	}
	if b.flags, err = resolveFlags(inv, o, b.settings); err != nil {
		return nil, &ConfigError{Field: "Flags", Err: err}
	}
	b.projectRoot = cwd
	if b.inGit = worktree.MayBeRepository(cwd); b.inGit {
		if root, err := worktree.RepoRoot(ctx, cwd); err == nil {
			b.projectRoot = root
		}
	}
	b.projectDir = transcript.ProjectDir(env.CohortHome, worktree.ProjectSlug(b.projectRoot))
	return b, nil
}

// addSettings adds the Config's (--settings') layers over the files: JSON
// text, or a settings file's path.
func (b *base) addSettings(layers []string) error {
	for i, l := range layers {
		t := strings.TrimSpace(l)
		label, root, data := fmt.Sprintf("Config.Settings[%d]", i), b.cwd, []byte(t)
		if !strings.HasPrefix(t, "{") {
			path := t
			if !filepath.IsAbs(path) {
				path = filepath.Join(b.cwd, path)
			}
			var err error
			if data, err = os.ReadFile(path); err != nil {
				return configErr("Settings", "settings layer %d: %v (give a JSON object or the path of a settings file)", i, err)
			}
			label, root = path, filepath.Dir(path)
		}
		if src := b.settings.Add(settings.ScopeCLI, label, root, data); src.Broken {
			p := b.settings.Problems[len(b.settings.Problems)-1]
			return configErr("Settings", "settings layer %d: %v", i, p)
		}
	}
	return nil
}

func resolveFlags(inv *invocation, o *options, s *settings.Settings) (*flags.Set, error) {
	var fs []flags.Settings
	for _, sec := range s.Section("flags") {
		var m map[string]any
		if err := json.Unmarshal(sec.Value, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: \"flags\" must be an object of flag names to values: %v", sec.Source.Path, sec.Line, err)
		}
		fs = append(fs, flags.Settings{Path: sec.Source.Path, Flags: m})
	}
	return flags.Resolve(flags.Config{Settings: fs, Environ: inv.Environ(), CLI: o.flags})
}

// settingString returns the highest-precedence string value of key.
func (b *base) settingString(key string) string {
	secs := b.settings.Section(key)
	for i := len(secs) - 1; i >= 0; i-- {
		var s string
		if json.Unmarshal(secs[i].Value, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// settingBool returns the highest-precedence boolean value of key.
func (b *base) settingBool(key string) bool {
	secs := b.settings.Section(key)
	for i := len(secs) - 1; i >= 0; i-- {
		var v bool
		if json.Unmarshal(secs[i].Value, &v) == nil {
			return v
		}
	}
	return false
}

// catalog loads agent definitions; problems are warnings on stderr.
func (b *base) catalog(ctx context.Context, known []string) *agentdef.Catalog {
	cat, warns, errs := agentdef.Load(ctx, agentdef.LoadConfig{
		Cwd: b.cwd, ProjectRoot: b.projectRoot, CohortHome: b.env.CohortHome, Home: b.env.Home,
		ClaudeCompat: b.env.ClaudeCompat, CLIJSON: b.o.agentsJSON, KnownTools: known, Flags: b.flags,
	})
	for _, w := range warns {
		fmt.Fprintf(b.inv.Stderr, "cohort: warning: %v\n", w)
	}
	for _, e := range errs {
		fmt.Fprintf(b.inv.Stderr, "cohort: error: %v (the other agent definitions still load)\n", e)
	}
	return cat
}

// Session is a running session: a lead (or, with Config.Role, a teammate)
// and everything it may start — subagents, background agents, forks,
// teammates — with their tools, permissions, tasks, transcripts and
// hooks. Run drives it one prompt at a time; the control methods are safe
// to call while a Run is going; Close stops it all.
type Session struct {
	*base
	cfg             Config
	id              string
	typed           typedAhead // what Send queued and the lead has not read
	model           *openedModel
	cat             *agentdef.Catalog
	tasks           *task.Registry
	checker         *permission.Checker
	rt              *crew.Crew
	lead            *crew.Agent
	resumed         *transcript.Transcript
	closers         []func()
	remote          *remoteConn
	modeName        string
	trace           *trace.Writer
	hooks           *hook.Runner
	teams           *team.Store
	team            *teammate.Lead // the lead's side of a team
	teamsOn         bool           // the agent_teams flag
	socket          string         // this session's uds: address, if listening
	mate            *teammate.Loop // the teammate this session runs (Config.Role)
	mateDef         string
	wt              *sessionWorktrees // worktree isolation (worktree.go)
	mcp             *mcp.Set          // the session's MCP servers (mcpservers.go)
	skills          *skill.Catalog    // the skills the Skill tool offers (skills.go)
	sandbox         *sandbox.Sandbox  // nil when off or unavailable (sandbox.go)
	sandboxExcluded []string
	// reaper starts the Bash commands that run outside the sandbox, so
	// that they die with the session (nil where it cannot be made).
	reaper *sandbox.Sandbox
	quiet  sync.Once // reads COHORT_NOTIFY_COALESCE once (loop.go)
	quietD time.Duration
	// gitSnapshot waits for the session's git snapshot, taken while the
	// rest of the session is set up.
	gitSnapshot func() string

	// structured is the last Run's answer under Config.JSONSchema
	// (structured.go).
	structured json.RawMessage

	mem projectMemory // the project's memory and its dreams (memory.go)

	out   *emitter // every agent's events, for Run (events.go)
	usage *counter // usage and cost of every agent (usage.go)
	ctl   control  // the running turn and the session's state (session.go)
}

// stopTasks stops every task still running and waits for them (bounded).
// Safe to call more than once.
func (s *Session) stopTasks() error {
	if s.tasks == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return s.tasks.Close(ctx)
}

// openTrace starts the --trace file. It is closed after the task registry,
// so the last notifications are in it.
func (s *Session) openTrace() error {
	if s.o.trace == "" {
		return nil
	}
	w, err := trace.Create(s.o.trace, trace.Config{Session: s.id, Prices: s.model.prices})
	if err != nil {
		return configErr("Trace", "--trace: %v", err)
	}
	s.trace = w
	s.closers = append(s.closers, func() {
		if err := w.Close(); err != nil {
			fmt.Fprintf(s.inv.Stderr, "cohort: warning: trace %s: %v\n", s.o.trace, err)
		}
	})
	return nil
}

// engineEvent fans an agent event out to the session's events, its usage
// and the trace.
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
	}
	s.out.engine(ev)
	if s.trace != nil {
		s.trace.Engine(ev)
	}
}

func (s *Session) taskEvent(ev task.Event) {
	s.out.task(ev)
	if s.trace != nil {
		s.trace.Task(ev)
	}
}

func (s *Session) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// open wires everything the session needs, in an order that writes
// nothing under Home until the configuration has been checked: the
// settings, flags, session to resume, model and permissions first. On
// error everything opened so far is closed.
func (s *Session) open(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if s.cfg.Role.IsTeammate() {
		return s.openTeammate(ctx)
	}
	if err := s.pickSession(); err != nil {
		return err
	}
	s.ctl.opening = hook.SourceStartup
	if s.resumed != nil {
		s.ctl.opening = hook.SourceResume
	}
	s.out = newEmitter(s.id, s.inv.Getenv("TMPDIR"), s.cfg.PartialMessages)
	if s.model, err = s.openModel(s.modelSpec()); err != nil {
		return &ConfigError{Field: "Model", Err: err}
	}
	s.usage.setPrices(s.model.prices)
	s.closers = append(s.closers, s.model.close)
	if err := s.permissions(); err != nil {
		return err
	}
	if err := s.remoteFromSettings(); err != nil {
		return &ConfigError{Field: "Remote", Err: err}
	}
	s.cat = s.catalog(ctx, s.knownTools())
	if s.o.agentName != "" {
		if _, ok := s.cat.Get(s.o.agentName); !ok {
			return configErr("Agent", "--agent %q: no such agent type (see cohort agents)", s.o.agentName)
		}
	}
	// From here on the session writes under Home.
	s.openMemory()
	s.startGitSnapshot(ctx)
	if err := s.openTrace(); err != nil {
		return err
	}
	s.tasks, err = task.NewRegistry(task.Config{Home: s.env.CohortHome, SessionID: s.id, OnEvent: s.taskEvent})
	if err != nil {
		return err
	}
	s.openRemote() // closed after the tasks stop: a stopped remote task cancels its job
	s.closers = append(s.closers, func() { _ = s.stopTasks() })
	if err := s.openSandbox(ctx); err != nil {
		return err
	}
	s.openHooks()
	if err := s.openTeams(); err != nil {
		return err
	}
	s.openWorktrees(ctx)
	s.openSkills()
	s.openMCP(ctx)
	if err := s.runtime(ctx); err != nil {
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

// pickSession chooses a new session id or the one to resume.
func (s *Session) pickSession() error {
	switch {
	case s.o.resume != "":
		s.id = s.o.resume
	case s.o.continueLast:
		id, err := transcript.Latest(s.projectDir)
		if err != nil {
			return configErr("Continue", "--continue: no earlier session in this project (%s)", s.projectDir)
		}
		s.id = id
	default:
		s.id = s.o.sessionID
		if s.id == "" {
			s.id = transcript.NewID()
		} else if _, err := os.Stat(transcript.Path(s.projectDir, s.id)); err == nil {
			return configErr("SessionID", "session %s exists already in this project; resume it (--resume) or choose another id", s.id)
		}
		return nil
	}
	if s.o.fork {
		from, to := s.id, s.o.sessionID
		if to == "" {
			to = transcript.NewID()
		}
		if err := transcript.Fork(s.projectDir, from, to); err != nil {
			return configErr("ForkSession", "cannot fork session %s: %w", from, err)
		}
		s.id = to
	}
	t, err := transcript.Load(transcript.Path(s.projectDir, s.id))
	if err != nil {
		return configErr("Resume", "cannot resume session %s: %w", s.id, err)
	}
	for _, p := range t.Problems {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %s\n", p)
	}
	s.resumed = t
	return nil
}

func (s *Session) permissions() error {
	mode := permission.Mode(s.o.permissionMode)
	if mode != "" {
		if _, err := permission.ParseMode(string(mode)); err != nil {
			return configErr("PermissionMode", "--permission-mode: %v", err)
		}
	}
	var allow, deny []string
	for _, a := range s.o.allowedTools {
		allow = append(allow, permission.SplitRules(a)...)
	}
	for _, d := range s.o.disallowedTools {
		deny = append(deny, permission.SplitRules(d)...)
	}
	c, err := permission.New(permission.Config{Env: s.env, Settings: s.settings, Mode: mode,
		Allow: allow, Deny: deny, AdditionalDirs: s.o.addDirs, Persist: permission.SettingsPersister(s.env),
		Protected: s.hookScripts(), Unsandboxed: s.sandboxConfig().unsandboxed})
	if err != nil {
		return &ConfigError{Field: "PermissionMode", Err: err}
	}
	for _, p := range c.Problems() {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v\n", p)
	}
	s.checker = c
	s.modeName = string(c.Mode())
	return nil
}

func (s *Session) prompter() permission.Prompter {
	if s.cfg.CanUseTool != nil {
		return canUse{s}
	}
	if s.o.permPromptCommand != "" {
		return &permission.Command{Command: s.o.permPromptCommand, Dir: s.cwd}
	}
	return permission.Headless{}
}

func (s *Session) runtime(ctx context.Context) error {
	cat := s.cat
	memory, err := prompt.LoadMemory(prompt.MemoryConfig{
		UserDirs: []string{s.env.CohortHome, filepath.Join(s.env.Home, ".claude")},
		Root:     s.projectRoot, Cwd: s.cwd,
	})
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v\n", err)
	}
	s.rt, err = crew.New(crew.Config{
		Model: s.model.model, Catalog: cat, Flags: s.flags, Tools: s.tools, Tasks: s.tasks, Extras: s.agentExtras,
		Permissions: s.checker,
		Prompter:    s.prompter(),
		// A CanUseTool callback is a person's (or a program's) answer:
		// Notification hooks tell them a prompt waits, as Claude Code's
		// permission_prompt does. Print mode asks no one.
		NotifyPrompts: s.cfg.CanUseTool != nil,
		Transcripts:   s.transcriptFor,
		Hooks:         s.engineHooks,
		Sink:          s.engineEvent,
		Worktrees:     s.wt.worktrees(),
		Remote:        s.remoteQueue(),
		MaxConcurrent: s.o.maxConcurrent,
		MaxTurns:      s.o.agentMaxTurns,
		Deadline:      s.o.agentTimeout,
		EvictAfter:    s.o.evictAfter,
		Index:         transcript.RetiredIndexPath(s.projectDir, s.id),
		MaxDepth:      s.o.maxDepth,
		SessionID:     s.id,
		Cwd:           s.cwd,
		Environment: prompt.Environment{Platform: goruntime.GOOS, Date: time.Now().Format(time.DateOnly),
			IsGitRepo: s.projectRoot != s.cwd || isGitDir(s.cwd)},
		Memory:      memory,
		AgentMemory: s.agentMemory,
		GitSnapshot: s.gitSnapshot(),
		Getenv:      s.inv.Getenv,
		ReadOnly:    readOnlyTools(s.tools(nil)),
		Compaction:  s.compaction(),
		Prices:      s.model.prices,
		Aliases:     s.model.aliases,
		Proactive:   s.cfg.Proactive || s.settingBool("proactive"),
	})
	if err != nil {
		return err
	}
	if s.wt != nil {
		s.closers = append(s.closers, func() { s.wt.close(s.rt.Workspaces(), s.inv.Stderr, s.o.verbose) })
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
	w, err := transcript.Create(transcript.WriterConfig{Path: transcript.SidechainPath(s.projectDir, s.id, info.ID),
		SessionID: s.id, AgentID: info.ID, Sidechain: true, Cwd: info.Cwd})
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}

func (s *Session) startLead(ctx context.Context) error {
	w, err := transcript.Create(transcript.WriterConfig{Path: transcript.Path(s.projectDir, s.id), SessionID: s.id, Cwd: s.cwd})
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
	cfg := crew.LeadConfig{Model: s.model.name, MaxTurns: s.o.maxTurns,
		MaxBudgetUSD: s.o.maxBudgetUSD, Recorder: w,
		Chain: prompt.Chain{Custom: s.o.systemPrompt, Append: s.o.appendSystemPrompt}}
	if n := s.o.maxThinkingTokens; n > 0 {
		cfg.Thinking = &llm.Thinking{BudgetTokens: n}
	}
	if s.o.agentName != "" {
		def, ok := s.rt.Catalog().Get(s.o.agentName)
		if !ok {
			return configErr("Agent", "--agent %q: no such agent type (see cohort agents)", s.o.agentName)
		}
		cfg.Def = def
	}
	if s.resumed != nil {
		cfg.History = s.resumed.Messages
		if s.resumed.Init != nil {
			cfg.System = s.resumed.Init.System
			if s.o.model == "" && s.resumed.Init.Model != "" {
				cfg.Model = s.resumed.Init.Model
			}
		}
	}
	s.lead, err = s.rt.NewLead(ctx, cfg)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, s.lead.Close)
	s.out.setLead(s.lead.ID())
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
	if !s.inGit {
		s.gitSnapshot = func() string { return "" }
		return
	}
	done := make(chan string, 1)
	go func() { done <- prompt.GitSnapshot(ctx, s.cwd) }()
	s.gitSnapshot = sync.OnceValue(func() string { return <-done })
	s.closers = append(s.closers, func() { s.gitSnapshot() }) // never leave it running
}

func isGitDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// userBlocks renders a prompt as the first (or a later) user message.
func userBlocks(opening []llm.Block, text string) []llm.Block {
	return append(append([]llm.Block(nil), opening...), llm.Text(strings.TrimRight(text, "\n")))
}
