package cohort

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/sandbox"
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
func (b *base) settingsPath(p, root string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return filepath.Join(b.env.Home, strings.TrimPrefix(p, "~"))
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(root, p)
}

// sandboxOn decides --sandbox against the settings.
func (b *base) sandboxOn(c sandboxConf) (bool, error) {
	switch b.o.sandbox {
	case "":
		return c.enabled, nil
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, configErr("Sandbox", "%q: want on or off", b.o.sandbox)
}

// newSandbox builds the session's sandbox (nil when it is off), printing
// once what it does not enforce on this machine.
func (s *Session) openSandbox(ctx context.Context) error {
	conf := s.sandboxConfig()
	for _, p := range conf.problems {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %s\n", p)
	}
	on, err := s.sandboxOn(conf)
	if err != nil {
		return err
	}
	s.openReaper(!on)
	if !on {
		fmt.Fprintf(s.inv.Stderr, "cohort: the sandbox is off: Bash commands run unconfined, and only the permission checks stand between them and your files\n")
		return nil
	}
	sb, err := sandbox.New(s.sandboxCfg(ctx, conf))
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: the sandbox is not available (%v): Bash commands run unconfined, and only the permission checks guard them\n", err)
		return nil
	}
	rep, err := sb.Report(ctx, s.cwd)
	for _, p := range sb.Problems() {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %s\n", p)
	}
	if err != nil {
		_ = sb.Close()
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: the sandbox is not available (%v): Bash commands run unconfined, and only the permission checks guard them\n", err)
		return nil
	}
	for _, n := range rep.NotEnforced {
		fmt.Fprintf(s.inv.Stderr, "cohort: sandbox: not enforced on this machine: %s\n", n)
	}
	if s.o.verbose {
		for _, n := range rep.Enforced {
			fmt.Fprintf(s.inv.Stderr, "cohort: sandbox: %s\n", n)
		}
	}
	s.sandbox, s.sandboxExcluded = sb, conf.excluded
	s.closers = append(s.closers, func() {
		if err := sb.Close(); err != nil {
			fmt.Fprintf(s.inv.Stderr, "cohort: warning: sandbox: %v\n", err)
		}
	})
	return nil
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
	r, err := sandbox.New(sandbox.Config{Unconfined: true})
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

// sandboxCfg is the sandbox configuration of this session.
func (s *Session) sandboxCfg(ctx context.Context, conf sandboxConf) sandbox.Config {
	var without []string
	if v := s.inv.Getenv("COHORT_SANDBOX_DISABLE"); v != "" {
		without = strings.Split(v, ",")
	}
	denied := s.deniedReads(ctx)
	return sandbox.Config{
		SessionID:         s.id,
		Dirs:              s.extraDirs(),
		AllowWrite:        conf.allowWrite,
		AllowUnixSockets:  conf.allowUnixSockets,
		DenyNetwork:       conf.denyNetwork,
		Protected:         s.hookScripts(),
		DenyRead:          denied.Paths,
		DenyReadUncovered: denied.Uncovered,
		DenyReadIn:        s.deniedReadsIn,
		Home:              s.env.Home,
		CacheDir:          s.inv.Getenv("XDG_CACHE_HOME"),
		CohortHome:        s.env.CohortHome,
		Without:           without,
	}
}

// extraDirs are the working directories besides the session's own: an
// agent writes its own cwd and these, so an agent isolated in a worktree
// never writes the main checkout.
func (s *Session) extraDirs() []string {
	var out []string
	for _, d := range s.checker.WorkingDirs() {
		if d != s.cwd {
			out = append(out, d)
		}
	}
	if s.mem.dir != "" {
		out = append(out, s.mem.dir) // the project's memory (memory.go)
	}
	return out
}

// grepSandbox confines Grep's rg process (search.GrepConfig.Sandbox): the
// launcher of the agent's working directory, in which what Read deny rules
// cover is hidden. It is the one place to switch to a read-only profile.
func (s *Session) grepSandbox(ctx context.Context, cwd string) (proc.Launcher, []string, error) {
	l, err := s.sandbox.Launcher(ctx, cwd)
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
func (s *Session) deniedReads(ctx context.Context) permission.ReadDenials {
	ctx, cancel := context.WithTimeout(ctx, denialSearchTimeout)
	defer cancel()
	return s.checker.ReadDenials(ctx, s.cwd, permission.DefaultDenialLimits)
}

// deniedReadsIn are the paths Read deny rules cover under an agent's
// working directory other than the session's (a worktree), for its
// sandbox policy (sandbox.Config.DenyReadIn).
func (s *Session) deniedReadsIn(cwd string) []string {
	if filepath.Clean(cwd) == s.cwd {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), denialSearchTimeout)
	defer cancel()
	return s.checker.ReadDenials(ctx, cwd, permission.DefaultDenialLimits).Paths
}

// denialSearchTimeout bounds the search at session start (a slow or
// network file system).
const denialSearchTimeout = 5 * time.Second
