package assemble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/tool"
)

// sandboxConf is the merged block: scalars from the highest-precedence
// source that sets them, lists from all of them (sandboxsettings.go reads
// it).
type sandboxConf struct {
	enabled                bool
	excluded, allowWrite   []string
	allowUnixSockets       []string
	denyNetwork            bool
	unsandboxed            permission.Unsandboxed // allowUnsandboxedCommands
	problems               []string
	enabledSrc, networkSrc string
}

// settingsPath resolves a path from a settings file: ~ is the home, a
// relative path is relative to the file's project directory.
func (b *Plan) settingsPath(p, root string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return filepath.Join(b.Process.Paths.Home, strings.TrimPrefix(p, "~"))
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(root, p)
}

// sandboxOn decides the plan's sandbox switch against the settings.
func (b *Plan) sandboxOn(c sandboxConf) (bool, error) {
	switch b.Sandbox {
	case "":
		return c.enabled, nil
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fieldErr("Sandbox", "Config.Sandbox %q: want on or off", b.Sandbox)
}

// openSandbox builds the session's sandbox (nil when it is off), printing
// once what it does not enforce on this machine.
//
// The launcher's start (an exec of this binary in new namespaces) and the
// writing profile's policy are not waited for here: they run beside the
// rest of the session's start and its first model request, which need
// neither, and the first command, hook or MCP server that needs them
// waits for them (sandbox.Sandbox starts once, whoever asks first). On an
// idle 2-core machine that start was about a tenth of a print run's wall
// time, all of it before the first request (BENCHMARKS.md §15). Where the
// sandbox cannot work at all (a kernel that cannot signal a process group
// through a pidfd) the session still learns it here, before anything runs,
// and runs commands unconfined with a warning, as it did. A launcher that
// fails to start once the sandbox was handed out fails closed instead: the
// commands that needed it fail with its error, none runs unconfined.
func (s *Session) openSandbox(ctx context.Context) error {
	conf := s.sandboxConfig()
	for _, p := range conf.problems {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", p)
	}
	on, err := s.sandboxOn(conf)
	if err != nil {
		return err
	}
	s.openReaper(!on)
	if !on {
		s.recordRoots(ctx, conf, nil)
		fmt.Fprintf(s.Process.Stderr, "cohort: the sandbox is off: Bash commands, command hooks and MCP servers run unconfined, and only the permission checks stand between them and your files\n")
		return nil
	}
	cfg, store := s.sandboxCfg(ctx, conf, s.checker, s.id, s.mem.dir)
	sb, err := sandbox.New(cfg)
	if err == nil {
		store.helper = sb.Helper
	}
	if err != nil {
		s.recordRoots(ctx, conf, nil)
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: the sandbox is not available (%v): Bash commands, command hooks and MCP servers run unconfined, and only the permission checks guard them\n", err)
		return nil
	}
	s.recordRoots(ctx, conf, sb)
	if !proc.GroupSignals() {
		// It cannot start: say so now and run unconfined, as before.
		_, err := sb.Report(ctx, s.Process.Cwd)
		_ = sb.Close()
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: the sandbox is not available (%v): Bash commands, command hooks and MCP servers run unconfined, and only the permission checks guard them\n", err)
		return nil
	}
	s.sandbox, s.sandboxExcluded = sb, conf.excluded
	// The start outlives ctx, which may end when the session is open (a
	// caller's deadline for opening it): a start cut short would fail
	// every command of the session. Closing the session ends it.
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	started := make(chan struct{})
	go func() {
		defer close(started)
		s.reportSandbox(bg, sb)
	}()
	s.closers = append(s.closers, func() {
		stop()
		<-started
		if err := sb.Close(); err != nil {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: sandbox: %v\n", err)
		}
	})
	s.warmReadOnly(bg, sb)
	return nil
}

// reportSandbox starts the launcher and the writing profile's policy of
// the session's directory, and prints what they do not enforce here (what
// they do too when verbose), or why they could not start: then every
// command that needs the sandbox fails with that error.
func (s *Session) reportSandbox(ctx context.Context, sb *sandbox.Sandbox) {
	rep, err := sb.Report(ctx, s.Process.Cwd)
	for _, p := range sb.Problems() {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", p)
	}
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: the sandbox could not be set up (%v): Bash commands, command hooks and MCP servers will fail with this error until it can be set up, or until the sandbox is turned off (sandbox.enabled: false in settings), which runs them unconfined\n", err)
		}
		return
	}
	for _, n := range rep.NotEnforced {
		fmt.Fprintf(s.Process.Stderr, "cohort: sandbox: not enforced on this machine: %s\n", n)
	}
	if s.Process.Verbose {
		for _, n := range rep.Enforced {
			fmt.Fprintf(s.Process.Stderr, "cohort: sandbox: %s\n", n)
		}
	}
}

// warmReadOnly sets up the read-only profile's policy (most commands run
// in it) beside the rest of the session's start, off the first command's
// path; Close waits for it.
func (s *Session) warmReadOnly(ctx context.Context, sb *sandbox.Sandbox) {
	done := make(chan struct{})
	go func() { defer close(done); _, _ = sb.ReportFor(ctx, s.Process.Cwd, sandbox.ReadOnly) }()
	s.closers = append(s.closers, func() { <-done })
}

// openReaper makes the unconfined launcher of the commands that run outside
// the sandbox (started at the first such command). Where it cannot be made
// (not Linux) they are Cohort's own children, and what leaves their process
// group outlives a killed Cohort.
//
// With the sandbox off every command goes through it, so it is started at
// once, beside the rest of the session's setup (the exec of a launcher is
// most of the first command's cost otherwise); Close waits for that start.
func (s *Session) openReaper(eager bool) {
	r, err := sandbox.New(sandbox.Config{Unconfined: true, Without: s.sandboxWithout()})
	if err != nil {
		return
	}
	s.reaper = r
	started := make(chan struct{})
	if eager {
		go func() { defer close(started); _ = r.Start() }()
	} else {
		close(started)
	}
	s.closers = append(s.closers, func() { <-started; _ = r.Close() })
}

// sandboxCfg is the sandbox configuration of session sessionID, whose
// permission checks are checker and whose memory directory is memDir.
// The returned gitStore hides git's store from model commands once it is
// given the sandbox's helper (see gitStore).
func (p *Plan) sandboxCfg(ctx context.Context, conf sandboxConf, checker *permission.Checker, sessionID, memDir string) (sandbox.Config, *gitStore) {
	denied := p.deniedReads(ctx, checker)
	store := &gitStore{cwd: p.Process.Cwd, agents: filepath.Join(p.Process.ProjectRoot, permission.WorktreesDir),
		any:    checker.DeniesReads,
		roots:  checker.ReadDenyRoots,
		denied: func(path string) bool { return checker.DeniedRead("", path) },
		deniedIn: func(dir string) []string {
			ctx, cancel := context.WithTimeout(ctx, denialSearchTimeout)
			defer cancel()
			return checker.ReadDenials(ctx, dir, permission.DefaultDenialLimits).Paths
		},
		env: p.childEnviron(), warn: p.Process.Stderr, hide: checker.HideFromReads, show: checker.ShowToReads}
	store.begin()
	return sandbox.Config{
		SessionID:         sessionID,
		Dirs:              p.extraDirs(checker),
		AllowWrite:        writableData(conf.allowWrite, memDir),
		Disposable:        p.disposable(),
		AllowUnixSockets:  conf.allowUnixSockets,
		DenyNetwork:       conf.denyNetwork,
		Protected:         p.hookScripts(),
		Secrets:           p.secrets(),
		DenyRead:          denied.Paths,
		DenyReadUncovered: denied.Uncovered,
		DenyReadIn:        p.deniedReadsIn(checker, store),
		DenyReadWatch:     filepath.Join(p.Process.ProjectRoot, permission.WorktreesDir),
		Home:              p.Process.Paths.Home,
		CacheDir:          p.Process.Getenv("XDG_CACHE_HOME"),
		CohortHome:        p.Process.Paths.CohortHome,
		TrustDir:          p.trustDir(),
		Without:           p.sandboxWithout(),
	}, store
}

// secrets are the directories of COHORT_HOME that hold what no command
// may read: the remote agents' signing key (remote/lead.key: with it a
// command could sign jobs for workers), teammates' configurations waiting
// in tmux/ (they carry the model key), the checkpoints' store (copies
// of every file, Read-denied ones included) and the trust registries,
// COHORT_HOME's trust/ and the user's (configtrust.UserDir): read-only
// was not enough, since a command could take their locks with a
// descriptor opened for reading (flock needs no write access) and hold
// them, and a session of the user's that cannot lock records neither its
// roots nor its top .mcp.json (attack11's o11-registry-lock). They are
// made now, private, so the sandbox can hide them before Cohort first
// writes there.
func (p *Plan) secrets() []string {
	var out []string
	for _, dir := range p.secretDirs() {
		if err := os.MkdirAll(dir, 0o700); err == nil {
			out = append(out, dir)
		}
	}
	return out
}

// trustDir is the user's registry of where agents could write
// (configtrust.UserDir), made now so the sandbox can keep it read-only
// for commands wherever it lies (an XDG_STATE_HOME or a HOME inside a
// project); "" when it cannot be made (a read-only HOME: then commands
// cannot write it either, and the session warns when it records).
func (p *Plan) trustDir() string {
	dir := configtrust.UserDir(p.Process.Getenv)
	if dir == "" || os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	return dir
}

// checkerProtected are the files the permission checker protects with
// their directories: the scripts hooks run, and the user's trust
// registry (its roots.json names the directory, which the file tools
// then write only as a person or an allow rule says, as $COHORT_HOME).
func (p *Plan) checkerProtected() []string {
	out := p.hookScripts()
	if dir := configtrust.UserDir(p.Process.Getenv); dir != "" {
		out = append(out, filepath.Join(dir, "roots.json"))
	}
	return out
}

// secretDirs are the directories secrets makes, named only: the file
// tools refuse them from the start (permission.Checker.HideSecrets),
// before the session writes anything under COHORT_HOME.
func (p *Plan) secretDirs() []string {
	home := p.Process.Paths.CohortHome
	if home == "" {
		return nil
	}
	var out []string
	for _, d := range []string{"remote", "tmux", "checkpoints", "trust"} {
		out = append(out, filepath.Join(home, d))
	}
	if dir := configtrust.UserDir(p.Process.Getenv); dir != "" {
		out = append(out, dir)
	}
	return out
}

// git is how the session runs git on the project and its worktrees
// (internal/safegit): the git its environment's PATH names, confined by
// the sandbox, read-only unless a call names what it writes, when the
// sandbox is on. When it is off, git starts under the reaper, as Bash
// commands then do: a git waiting on a FIFO the model made dies with the
// session even when Cohort is killed (safegit's deadline stops it
// otherwise); a reaper that cannot start leaves git Cohort's child.
func (s *Session) git() *safegit.Runner {
	env := s.childEnviron()
	r := &safegit.Runner{Env: env, Git: safegit.OnPath(env)}
	if s.sandbox != nil {
		r.Sandbox = s.sandbox.Helper
	} else if reaper := s.reaper; reaper != nil {
		r.Sandbox = func(ctx context.Context, writable []string) (proc.Launcher, error) {
			if l, err := reaper.Helper(ctx, writable); err == nil {
				return l, nil
			}
			return nil, nil
		}
	}
	return r
}

// disposable is the session's directory when it is a remote job's clone
// (sandbox.Config.Disposable).
func (p *Plan) disposable() []string {
	if p.Disposable {
		return []string{p.Process.Cwd}
	}
	return nil
}

// sandboxWithout lists the layers COHORT_SANDBOX_DISABLE leaves out.
func (p *Plan) sandboxWithout() []string {
	if v := p.Process.Getenv("COHORT_SANDBOX_DISABLE"); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// extraDirs are the working directories besides the session's own: an
// agent writes its own cwd and these, so an agent isolated in a worktree
// never writes the main checkout. A directory only a file obeyed by
// approval names (approvedOnlyDirs) is left out here too, whatever the
// checker concluded: the sandbox's writable set is the person's.
func (p *Plan) extraDirs(checker *permission.Checker) []string {
	var out []string
	approved := p.approvedOnlyDirs()
	for _, d := range checker.WorkingDirs() {
		if d != p.Process.Cwd && !approved[filepath.Clean(d)] {
			out = append(out, d)
		}
	}
	return out
}

// writableData adds the project's memory (memory.go) to the
// sandbox.allowWrite roots: writable like them, it is not a working
// directory, whose settings and git dir the sandbox protects.
func writableData(allowWrite []string, memDir string) []string {
	if memDir == "" {
		return allowWrite
	}
	return append(append([]string(nil), allowWrite...), memDir)
}

// grepSandbox confines Grep's rg process (search.GrepConfig.Sandbox): the
// read-only profile of the agent's working directory, in which what Read
// deny rules cover is hidden.
func (s *Session) grepSandbox(ctx context.Context, cwd string) (proc.Launcher, []string, error) {
	l, err := s.sandbox.Launcher(ctx, cwd, sandbox.ReadOnly)
	return l, s.sandbox.Env(), err
}

// bashExcluded reports lines that run outside the sandbox: every command
// in them matches sandbox.excludedCommands.
func (s *Session) bashExcluded(line string) bool {
	return len(s.sandboxExcluded) > 0 && permission.CommandsMatch(line, s.sandboxExcluded)
}

// deniedReads are the paths Read deny rules cover when the session
// starts, which the sandbox hides, and what that leaves readable: a
// pattern's later matches, a path that does not exist yet. The search for
// a pattern's matches is bounded in entries, paths and time.
func (p *Plan) deniedReads(ctx context.Context, checker *permission.Checker) permission.ReadDenials {
	ctx, cancel := context.WithTimeout(ctx, denialSearchTimeout)
	defer cancel()
	return checker.ReadDenials(ctx, p.Process.Cwd, permission.DefaultDenialLimits)
}

// deniedReadsIn gives the paths Read deny rules cover for an agent working
// in cwd, for its sandbox policy (sandbox.Config.DenyReadIn): under a
// worktree, its own copies; under the session's directory, also the
// copies in the agents' worktrees made since the session started
// (sandbox.Config.DenyReadWatch sets the policy up again when one is),
// and git's object store and index when history holds a denied file.
func (p *Plan) deniedReadsIn(checker *permission.Checker, store *gitStore) func(cwd string) []string {
	return func(cwd string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), denialSearchTimeout)
		defer cancel()
		return append(checker.ReadDenials(ctx, cwd, permission.DefaultDenialLimits).Paths, store.paths()...)
	}
}

// denialSearchTimeout bounds the search at session start (a slow or
// network file system).
const denialSearchTimeout = 5 * time.Second

// bounds is the sandbox's protected-path computation for the file tools
// (crew.Config.Bounds), nil without a sandbox (never a typed nil).
func (s *Session) bounds() tool.Bounds {
	if s.sandbox == nil {
		return nil
	}
	return s.sandbox
}
