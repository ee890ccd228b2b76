// Package shell holds the Bash tool: it runs a command line through bash
// (or sh where bash is missing) in the agent's working directory and
// returns its combined output.
//
// Decisions the spec leaves open:
//
//   - Every call is a fresh `bash -c` in Env.Cwd; a `cd` or an exported
//     variable does not carry over to the next call. The engine owns the
//     working directory, and a persistent shell would let one agent's state
//     leak into the next call in ways the model cannot see.
//   - The command runs in a new session (internal/proc): its own process
//     group, no controlling terminal, stdin at /dev/null. A program that
//     wants to prompt fails at once rather than hanging until the timeout.
//     The environment is ours without the credentials Cohort holds
//     (internal/childenv), plus Config.Env (settings "env"), COHORT=1 (so
//     scripts can tell), an empty CDPATH (so cd goes where the text says,
//     as the permission check assumes), and GIT_EDITOR=true and
//     GIT_TERMINAL_PROMPT=0 so git never waits for a person.
//   - With Config.Sandbox every command, foreground or background, starts
//     through the session's sandbox launcher (package sandbox) with the
//     policy of the agent's working directory and TMPDIR set to the
//     private temp dir; bash.command is the one place a Bash child is
//     built. The profile follows the permission decision carried in
//     tool.Env.Confinement: read-only (no writes but TMPDIR, no network)
//     for a call allowed only as read-only, and for a call whose Env says
//     nothing; the writing profile for one a rule, a mode, a hook or a
//     person approved. A blocked write's note says when the command ran
//     read-only. A line whose commands all match sandbox.excludedCommands, or
//     a call with dangerouslyDisableSandbox (which the permission check
//     asks a person about, after sandbox.allowUnsandboxedCommands; with
//     Config.KeepSandbox, its false, the flag is ignored and the call runs
//     sandboxed), runs unconfined: through
//     Config.Reaper when it is set, else as a plain child. When
//     a sandboxed command fails and its output names a write the sandbox
//     blocked, the result says so and what the user can do.
//   - When the command finishes, times out or is cancelled, its whole
//     process group is stopped (SIGTERM, then SIGKILL) and reaped before
//     Run returns; `server &` does not survive the call. A process that
//     left the group (setsid, a double fork) survives the call but not the
//     session: the launcher that started the command (the sandbox's, or
//     the Reaper) adopts it as child subreaper and kills it when the
//     session ends or Cohort is killed (without a launcher, nothing can).
//     Long-running work
//     goes through run_in_background, which hands the command to the task
//     engine via Config.Background.
//   - Output is stdout and stderr interleaved as produced, capped at 30,000
//     bytes: the first and last halves are kept and a line in between says
//     how much was left out. A non-zero exit is an is_error result that
//     starts with the exit code and still carries the output. A timeout is
//     an is_error result; cancellation (ctx) is a Go error, as the tool
//     contract asks.
package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/tool"
)

// Limits of the timeout field, in milliseconds (Claude Code's).
const (
	DefaultTimeoutMS = 120_000
	MaxTimeoutMS     = 600_000
)

// BackgroundFunc starts command as a background task for the calling agent
// and returns the task's id and the file its output goes to. The task runs
// the command by calling run, which starts it the way the Bash tool starts
// every command (sandboxed when the tool is) and returns when it ended.
type BackgroundFunc func(ctx context.Context, env *tool.Env, command, description string, run RunFunc) (taskID, outputFile string, err error)

// RunFunc runs a background command with its output (stdout and stderr
// interleaved) going to out.
type RunFunc func(ctx context.Context, out io.Writer) (proc.Exit, error)

// Config configures the Bash tool. Zero values take the defaults.
type Config struct {
	// Background runs commands with run_in_background; nil makes such calls
	// fail with a message saying background shells are unavailable.
	Background BackgroundFunc
	// Shell is the shell binary; empty means bash from PATH, else sh.
	Shell string
	// MaxOutput caps the returned output in bytes (30,000).
	MaxOutput int
	// Grace is the wait between SIGTERM and SIGKILL (internal/proc's
	// default when zero).
	Grace time.Duration
	// Env is added to every command's environment after Cohort's own (the
	// settings "env" entries). Credentials Cohort holds reach a command
	// only this way.
	Env []string
	// Sandbox, when set, confines every command (package sandbox); nil
	// runs them as plain children.
	Sandbox *sandbox.Sandbox
	// Excluded reports command lines that run outside the sandbox
	// (sandbox.excludedCommands); nil excludes none.
	Excluded func(command string) bool
	// KeepSandbox ignores dangerouslyDisableSandbox: the command runs
	// sandboxed anyway (sandbox.allowUnsandboxedCommands false).
	KeepSandbox bool
	// Reaper, when set, starts the commands that run outside the sandbox
	// (an unconfined launcher, sandbox.Config.Unconfined), so that what
	// they leave behind dies with the session even when Cohort is killed;
	// nil runs them as Cohort's own children. When it cannot start they
	// run as Cohort's children, as before.
	Reaper *sandbox.Sandbox
}

// CommandGuard is a tool.WriteGuard that also vets whole command lines
// (an agent isolated in a worktree: worktree.Guard). When Env.Guard
// implements it, Bash asks it before running anything, in the foreground
// or the background; a refusal is an is_error result and nothing runs.
type CommandGuard interface {
	CheckCommand(command, dir string) error
}

func envGuard(env *tool.Env) tool.WriteGuard {
	if env == nil {
		return nil
	}
	return env.Guard
}

// NewBash returns the Bash tool. A command may change anything, so its
// calls are neither read-only nor concurrency-safe. Safe for concurrent
// use.
func NewBash(cfg Config) tool.Tool {
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = 30_000
	}
	b := &bash{cfg: cfg}
	return tool.New(tool.Spec[input]{Name: "Bash", Description: description, Input: schema, Run: b.run})
}

// bash is the Bash tool's state: its configuration.
type bash struct{ cfg Config }

const description = `Runs a shell command with bash in the working directory and returns its output (stdout and stderr together) and exit status.

- Each call starts a fresh shell in the working directory: cd and exported variables do not carry over to the next call. Use absolute paths, or chain commands with && in one call.
- Quote paths that contain spaces, e.g. cd "/path/with spaces".
- When the timeout runs out, the command and every process it started are stopped.
- Output beyond 30000 bytes is cut in the middle; the beginning and the end are kept. Pipe long output through head, tail or grep.
- Commands cannot be interactive: stdin is empty and there is no terminal. Pass flags that avoid prompts (e.g. --yes, -y).
- Processes started with & are stopped when the command ends. For servers, watchers and other long-running work set run_in_background to true; the command then runs as a background task and you are told how to read its output.
- Prefer the dedicated tools over shell equivalents: Glob instead of find or ls for finding files, Grep instead of grep or rg, Read instead of cat, head or tail, Edit or Write instead of sed, awk or echo redirection.
- Independent commands can be run in parallel through separate calls; dependent ones belong in one call joined with &&.`

var schema = tool.Object(
	tool.Required("command", tool.String("The command line to run.")),
	tool.Optional("timeout", tool.Integer("Timeout in milliseconds (default 120000, max 600000).").WithMin(1).WithMax(MaxTimeoutMS)),
	tool.Optional("description", tool.String(`What the command does, in 5–10 words, e.g. "Run the unit tests".`)),
	tool.Optional("run_in_background", tool.Boolean("Run the command as a background task and return at once (default false).")),
	tool.Optional("dangerouslyDisableSandbox", tool.Boolean("Run this one command outside the sandbox (default false). The user is asked first unless permissions are bypassed; use it only when a command failed because the sandbox blocked something it needs.")),
)

type input struct {
	Command         string `json:"command"`
	Timeout         int    `json:"timeout"`
	Description     string `json:"description"`
	RunInBackground bool   `json:"run_in_background"`
	NoSandbox       bool   `json:"dangerouslyDisableSandbox"`
}

// Outcome is the Meta of a foreground Bash result, for UIs.
type Outcome struct {
	ExitCode     int
	Signal       string // e.g. "killed", empty if the command exited
	TimedOut     bool
	OutputBytes  int64
	DroppedBytes int64
	Duration     time.Duration
}

// Response is the structured result of a Bash call (tool.Result.Response),
// in Claude Code's shape. The command runs with stderr merged into stdout,
// in the order the model reads them, so Stdout holds both and Stderr is
// empty. Interrupted is set when the command was stopped before it ended
// (its timeout ran out).
type Response struct {
	Stdout           string `json:"stdout"`
	Stderr           string `json:"stderr"`
	Interrupted      bool   `json:"interrupted"`
	IsImage          bool   `json:"isImage"`
	BackgroundTaskID string `json:"backgroundTaskId,omitempty"`
}

// BackgroundStarted is the Meta of a run_in_background result.
type BackgroundStarted struct {
	TaskID     string
	OutputFile string
}

// run is one Bash call: in the foreground, or handed to Config.Background.
func (b *bash) run(ctx context.Context, env *tool.Env, in input) (tool.Result, error) {
	if strings.TrimSpace(in.Command) == "" {
		return tool.Errorf("command is empty; pass the command line to run"), nil
	}
	if g, ok := envGuard(env).(CommandGuard); ok {
		if err := g.CheckCommand(in.Command, env.Cwd); err != nil {
			return tool.Errorf("Command refused: %v", err), nil
		}
	}
	if in.RunInBackground {
		return b.background(ctx, env, in)
	}
	dir, err := workDir(env)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	timeout := time.Duration(DefaultTimeoutMS) * time.Millisecond
	if in.Timeout > 0 {
		timeout = time.Duration(min(in.Timeout, MaxTimeoutMS)) * time.Millisecond
	}
	start := time.Now()
	prof := profileOf(env)
	cmd, err := b.command(ctx, in, dir, prof)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	cmd.Timeout = timeout
	res, err := proc.Output(ctx, cmd, b.cfg.MaxOutput)
	if err != nil {
		return tool.Result{}, fmt.Errorf("bash: %w", err)
	}
	meta := Outcome{ExitCode: res.Code, TimedOut: errors.Is(res.Stopped, proc.ErrTimeout),
		OutputBytes: res.Total, DroppedBytes: res.Dropped, Duration: time.Since(start)}
	if res.Signal != 0 {
		meta.Signal = res.Signal.String()
	}
	out := strings.TrimRight(res.Output, "\n")
	if cmd.Launcher != nil && res.Code != 0 && b.sandboxed(in) {
		out = joinNonEmpty(out, b.explain(out, dir, prof))
	}
	switch {
	case res.Stopped != nil && !meta.TimedOut:
		r := tool.Result{Content: []llm.Block{llm.Text(joinNonEmpty("Command interrupted.", out))}, IsError: true, Meta: meta}
		return r, fmt.Errorf("bash: command interrupted: %w", res.Stopped)
	case meta.TimedOut:
		return result(true, meta, fmt.Sprintf("Command timed out after %s and was stopped, with every process it started.", timeout), out), nil
	case res.Signal != 0:
		return result(true, meta, "Command was killed by signal "+meta.Signal+".", out), nil
	case res.Code != 0:
		return result(true, meta, fmt.Sprintf("Exit code %d", res.Code), out), nil
	case out == "":
		return result(false, meta, "(no output)", ""), nil
	}
	return result(false, meta, "", out), nil
}

func (b *bash) background(ctx context.Context, env *tool.Env, in input) (tool.Result, error) {
	if b.cfg.Background == nil {
		return tool.Errorf("Background shells are not available in this build. Run the command in the foreground instead (timeout up to %d ms), or leave out run_in_background.", MaxTimeoutMS), nil
	}
	dir, err := workDir(env)
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	prof := profileOf(env)
	run := func(ctx context.Context, out io.Writer) (proc.Exit, error) {
		cmd, err := b.command(ctx, in, dir, prof)
		if err != nil {
			return proc.Exit{}, err
		}
		cmd.Stdout, cmd.MergeStderr = out, true
		return proc.Run(ctx, cmd)
	}
	id, file, err := b.cfg.Background(ctx, env, in.Command, in.Description, run)
	if err != nil {
		return tool.Errorf("could not start the command in the background: %v", err), nil
	}
	msg := fmt.Sprintf("Command started in the background as task %s. Its output is written to %s; you will be notified when it finishes.", id, file)
	return tool.Result{Content: []llm.Block{llm.Text(msg)}, Meta: BackgroundStarted{TaskID: id, OutputFile: file},
		Response: &Response{BackgroundTaskID: id}}, nil
}

// profileOf is the sandbox profile the call's permission decision allows
// (tool.Env.Confinement): read-only unless a rule, a mode, a hook or a
// person approved the call. Without an Env nothing approved anything.
func profileOf(env *tool.Env) sandbox.Profile {
	if env != nil && env.Confinement == tool.ConfineWrite {
		return sandbox.Writing
	}
	return sandbox.ReadOnly
}

// sandboxed reports whether a call runs in the sandbox: it has one, the
// line is not excluded, and the model did not ask for this one call to run
// outside it (which the permission check asks a person about) or
// Config.KeepSandbox ignores that ask.
func (b *bash) sandboxed(in input) bool {
	return b.cfg.Sandbox != nil && (!in.NoSandbox || b.cfg.KeepSandbox) && (b.cfg.Excluded == nil || !b.cfg.Excluded(in.Command))
}

// command is how a call starts: one place for the foreground and the
// background, sandboxed (see sandboxed) in profile prof.
func (b *bash) command(ctx context.Context, in input, dir string, prof sandbox.Profile) (proc.Command, error) {
	cmd := proc.Command{Path: b.shell(), Args: []string{"-c", in.Command}, Dir: dir, Env: b.childEnv(),
		Grace: b.cfg.Grace, NewSession: true}
	if !b.sandboxed(in) {
		if b.cfg.Reaper != nil {
			if l, err := b.cfg.Reaper.Launcher(ctx, dir, sandbox.Writing); err == nil {
				cmd.Launcher = l
			}
		}
		return cmd, nil
	}
	sb := b.cfg.Sandbox
	l, err := sb.Launcher(ctx, dir, prof)
	if err != nil {
		return cmd, fmt.Errorf("Command not run: %v", err)
	}
	cmd.Launcher = l
	cmd.Env = append(cmd.Env, sb.Env()...)
	return cmd, nil
}

// explain adds the sandbox's notes about blocked writes.
func (b *bash) explain(out, dir string, prof sandbox.Profile) string {
	note := b.cfg.Sandbox.ExplainFor(out, dir, prof)
	if note != "" && prof == sandbox.ReadOnly {
		note += "\n(This command ran read-only, without network: it was allowed as a read-only command. A command that needs to write or reach the network must be approved by the user or an allow rule.)"
	}
	return note
}

func result(isError bool, meta Outcome, head, out string) tool.Result {
	return tool.Result{Content: []llm.Block{llm.Text(joinNonEmpty(head, out))}, IsError: isError, Meta: meta,
		Response: &Response{Stdout: out, Interrupted: meta.TimedOut}}
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

func (b *bash) shell() string {
	if b.cfg.Shell != "" {
		return b.cfg.Shell
	}
	if p := lookBash(); p != "" {
		return p
	}
	return "sh"
}

// bashPath remembers where bash was found for a given PATH: the lookup
// stats every PATH entry, and agents make thousands of Bash calls.
var bashPath struct {
	sync.Mutex
	path, found string
}

// lookBash returns bash's path under the current PATH, or "" when there is
// none (not remembered, so a bash installed later is found).
func lookBash() string {
	path := os.Getenv("PATH")
	bashPath.Lock()
	defer bashPath.Unlock()
	if bashPath.found != "" && bashPath.path == path {
		return bashPath.found
	}
	p, err := exec.LookPath("bash")
	if err != nil {
		return ""
	}
	bashPath.path, bashPath.found = path, p
	return p
}

// workDir returns the agent's working directory (tool.Env.WorkDir),
// checking that it exists.
func workDir(env *tool.Env) (string, error) {
	dir, err := env.WorkDir()
	if err != nil {
		return "", err
	}
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		return "", fmt.Errorf("the working directory %s does not exist or is not a directory", dir)
	}
	return dir, nil
}

// childEnv is our environment with the markers described in the package
// doc; later entries win over inherited ones.
func (b *bash) childEnv() []string {
	// CDPATH is cleared so that "cd dir" goes where the text says: the
	// permission check reasons about the command as written.
	env := append(childenv.Scrub(os.Environ()), "COHORT=1", "GIT_EDITOR=true", "GIT_TERMINAL_PROMPT=0", "CDPATH=")
	return append(env, b.cfg.Env...)
}
