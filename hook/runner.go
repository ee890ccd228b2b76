package hook

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/transcript"
)

// Defaults for Config's zero values and output limits.
const (
	DefaultTimeout = 60 * time.Second
	DefaultShell   = "/bin/sh"
	// stdoutLimit bounds what is kept of a hook's stdout. It is large
	// because updatedInput may carry a whole file; an answer cut at the
	// limit cannot be parsed and counts as unreadable.
	stdoutLimit = 8 << 20
	// stderrLimit bounds the reason text (head and tail are kept).
	stderrLimit = 64 << 10
)

// Config configures a Runner. Zero values of optional fields are defaults.
type Config struct {
	// Hooks are the configured commands (usually FromSettings).
	Hooks *Set
	// ProjectDir is exported to commands as COHORT_PROJECT_DIR and
	// CLAUDE_PROJECT_DIR; empty means the agent's cwd.
	ProjectDir string
	// Env is the base environment of the commands; nil means ours.
	// Credentials Cohort holds (internal/childenv) are removed from it.
	Env []string
	// ExtraEnv is added after Env and kept whole, credentials included:
	// the settings "env" entries, which the user put there on purpose.
	ExtraEnv []string
	// Shell runs each command as Shell -c COMMAND (default /bin/sh).
	Shell string
	// Timeout applies to commands without their own (default 60 s).
	Timeout time.Duration
	// Grace is how long each stop step waits before the next (close
	// stdin, SIGTERM, SIGKILL); 0 means proc.DefaultGrace.
	Grace time.Duration
	// Observer, when set, is told about every command run (for --verbose
	// and traces). It is called from the goroutine that fired the event,
	// after all of that event's commands ended, once per command in
	// configuration order; different agents may call it concurrently.
	Observer func(Record)
	// Now is the clock used for durations (default time.Now).
	Now func() time.Time
	// Home resolves "~/" in "if" conditions; empty means HOME from Env
	// (or the process's).
	Home string
	// NewID makes prompt ids (default session.NewID, random UUIDs).
	NewID func() string
	// Models runs prompt and agent hooks; nil makes them fail (a
	// non-blocking error) with a message that says so.
	Models Models
	// Sandbox, when set, confines every command hook but those that opt
	// out ("sandbox": false): it runs as the agent's approved Bash
	// commands do, in the agent's cwd. A hook the sandbox cannot start is
	// a non-blocking error, never run unconfined instead. Nil (the session
	// has no sandbox) runs command hooks as Cohort's children.
	Sandbox Sandbox
	// Missing are the commands whose scripts did not exist when the
	// session started (Set.MissingScripts). Such a command runs as
	// configured while its script stays missing; once the script exists
	// it is not run (a command of the session may have written it): the
	// command fails instead, denying a PreToolUse call and being a
	// non-blocking error elsewhere.
	Missing []Missing
}

// Record describes one command run, for the Observer.
type Record struct {
	Event   Event
	AgentID string
	Depth   int
	Command *Command
	// ExitCode is the command's status; -1 when it was killed by a signal
	// or never started.
	ExitCode int
	Duration time.Duration
	// Decision is what the run amounted to: allow, ask, deny, block, stop,
	// context, error or none.
	Decision string
	// Err is set when the hook failed without blocking (could not start,
	// timed out, crashed, non-2 exit status, unreadable answer).
	Err error
	// Stderr is the (capped) standard error of the command.
	Stderr string
}

// Runner runs hook commands. It is safe for concurrent use: one Runner
// serves every agent of a session; For binds it to one agent.
type Runner struct {
	cfg Config
	env []string
	// prompt is the id of the latest user prompt (nil before the first).
	prompt atomic.Pointer[string]
	// expanded says UserPromptExpansion started the current prompt, so
	// the UserPromptSubmit that follows keeps its id.
	expanded atomic.Bool
}

// NewRunner returns a Runner for cfg.
func NewRunner(cfg Config) *Runner {
	if cfg.Shell == "" {
		cfg.Shell = DefaultShell
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = transcript.NewID
	}
	base := cfg.Env
	if base == nil {
		base = os.Environ()
	}
	base = childenv.Scrub(base)
	env := make([]string, 0, len(base)+len(cfg.ExtraEnv)+2)
	for _, kv := range base {
		if !strings.HasPrefix(kv, "COHORT_PROJECT_DIR=") && !strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") {
			env = append(env, kv)
		}
		if h, ok := strings.CutPrefix(kv, "HOME="); ok && cfg.Home == "" {
			cfg.Home = h
		}
	}
	if cfg.Home == "" {
		cfg.Home, _ = os.UserHomeDir()
	}
	env = append(env, cfg.ExtraEnv...)
	return &Runner{cfg: cfg, env: env}
}

// NewPrompt starts a new user prompt: later events of every agent of the
// runner carry its id as prompt_id. UserPromptSubmit calls it; a front end
// that takes prompts without firing that event calls it itself.
func (r *Runner) NewPrompt() string {
	id := r.cfg.NewID()
	r.prompt.Store(&id)
	return id
}

// promptID returns the current prompt's id, "" before the first.
func (r *Runner) promptID() string {
	if p := r.prompt.Load(); p != nil {
		return *p
	}
	return ""
}

// runAll runs cmds in parallel with stdin as their input and returns what
// happened, in the order of cmds.
func (r *Runner) runAll(ctx context.Context, cmds []*Command, stdin []byte, cwd string) []ran {
	out := make([]ran, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Go(func() { out[i] = r.run(ctx, c, stdin, cwd) })
	}
	wg.Wait()
	return out
}

func (r *Runner) run(ctx context.Context, c *Command, stdin []byte, cwd string) ran {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = r.cfg.Timeout
	}
	switch {
	case c.fn != nil:
		return r.runFunc(ctx, c, stdin, timeout)
	case c.Type == TypeHTTP:
		return r.runHTTP(ctx, c, stdin, timeout)
	case c.Type == TypePrompt || c.Type == TypeAgent:
		return r.runModel(ctx, c, stdin, timeout, cwd)
	}
	if m, ok := r.appeared(c); ok {
		code := 1
		if c.Event == PreToolUse {
			code = 2 // deny: fail closed
		}
		return ran{cmd: c, exit: proc.Exit{Code: code}, stderr: fmt.Sprintf("Cohort did not run this hook: its script %s did not exist when the session started and appeared since (a command may have written it); start a new session to run it", m.Script)}
	}
	project := r.cfg.ProjectDir
	if project == "" {
		project = cwd
	}
	env := append(r.env[:len(r.env):len(r.env)], "COHORT_PROJECT_DIR="+project, "CLAUDE_PROJECT_DIR="+project)
	var launcher proc.Launcher
	if sb := r.cfg.Sandbox; sb != nil && !c.Unsandboxed {
		l, err := sb.Launcher(ctx, cwd, c.OutputTargets(r.cfg.Home, project, cwd))
		if err != nil {
			return ran{cmd: c, exit: proc.Exit{Code: -1}, err: fmt.Errorf("the sandbox could not confine it (%w); it was not run unconfined instead", err)}
		}
		launcher, env = l, append(env, sb.Env()...)
	}
	stdout, stderr := proc.NewCapture(stdoutLimit), proc.NewCapture(stderrLimit)
	start := r.cfg.Now()
	exit, err := proc.Run(ctx, proc.Command{
		Path:       r.cfg.Shell,
		Args:       []string{"-c", c.Cmd},
		Dir:        cwd,
		Env:        env,
		Stdin:      bytes.NewReader(stdin),
		Stdout:     stdout,
		Stderr:     stderr,
		Timeout:    timeout,
		Grace:      r.cfg.Grace,
		NewSession: true, // no terminal: a hook cannot stop on a prompt
		Launcher:   launcher,
	})
	res := ran{cmd: c, exit: exit, err: err, dur: r.cfg.Now().Sub(start),
		stdout: stdout.String(), stdoutCut: stdout.Dropped() > 0, stderr: stderr.String()}
	if err != nil {
		res.exit.Code = -1
	}
	if launcher != nil && err == nil {
		// Whatever the exit status: `cp … || true` hides a refused write.
		res.refused = r.cfg.Sandbox.Explain(res.stderr+"\n"+res.stdout, cwd)
	}
	return res
}

func (r *Runner) observe(ev Event, a *Subject, runs []ran, vs []verdict) {
	if r.cfg.Observer == nil {
		return
	}
	for i, x := range runs {
		r.cfg.Observer(Record{Event: ev, AgentID: a.ID, Depth: a.Depth, Command: x.cmd,
			ExitCode: x.exit.Code, Duration: x.dur, Decision: vs[i].label(), Err: vs[i].err, Stderr: x.stderr})
	}
}

// appeared reports a script of c that was missing when the session
// started and exists now.
func (r *Runner) appeared(c *Command) (Missing, bool) {
	for _, m := range r.cfg.Missing {
		if m.Command == c && slices.ContainsFunc(m.Paths, exists) {
			return m, true
		}
	}
	return Missing{}, false
}
