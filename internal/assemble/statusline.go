package assemble

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/settings"
)

// statusLineTimeout bounds one run of the statusLine command.
const statusLineTimeout = 5 * time.Second

// statusLineSpec is the settings' statusLine (Claude Code's {"type":
// "command", "command": …}) as the settings file that wins sets it, with
// Cohort's "sandbox" key. The command runs as a command hook does (see
// "The sandbox" in package hook): in the session's sandbox, unless the
// entry says "sandbox": false in a file the model cannot write.
type statusLineSpec struct {
	Command    string
	Unconfined bool   // "sandbox": false, honoured
	Problem    string // what the user is told at the start about its "sandbox" key
	where      string // file:line
}

// statusLine reads the settings' statusLine: the zero value when no
// settings file sets one or the one that wins is not a command.
func (b *Plan) statusLine() statusLineSpec {
	secs := b.Settings.Loaded.Section("statusLine")
	if len(secs) == 0 {
		return statusLineSpec{}
	}
	sec := secs[len(secs)-1]
	var sl struct {
		Type, Command string
		Sandbox       json.RawMessage
	}
	if json.Unmarshal(sec.Value, &sl) != nil || (sl.Type != "" && sl.Type != "command") || sl.Command == "" {
		return statusLineSpec{}
	}
	out := statusLineSpec{Command: sl.Command, where: sec.Source.Path}
	if sec.Line > 0 {
		out.where += ":" + strconv.Itoa(sec.Line)
	}
	if len(sl.Sandbox) == 0 {
		return out
	}
	var on bool
	switch {
	case json.Unmarshal(sl.Sandbox, &on) != nil:
		out.Problem = fmt.Sprintf(`the statusLine %q (from %s): "sandbox" must be true or false, not %s; it runs in the sandbox`, sl.Command, out.where, sl.Sandbox)
	case on:
	case !slices.Contains([]settings.Scope{settings.ScopeUser, settings.ScopeProject, settings.ScopeLocal}, sec.Source.Scope):
		out.Problem = fmt.Sprintf(`the statusLine %q (from %s): "sandbox": false is honoured only in user, project and local settings files, which commands cannot write; it runs in the sandbox`, sl.Command, out.where)
	case sec.Source.Approved:
		out.Problem = fmt.Sprintf(`the statusLine %q (from %s): "sandbox": false is not honoured in a settings file that lies where agents' commands can write: your approval covers this file's content, not the program it runs, which agents can rewrite there; it runs in the sandbox (move it to the project's top-level or your user settings to run it unconfined)`, sl.Command, out.where)
	default:
		if v := b.judge(sl.Command, nil); v.Refusal != "" {
			out.Problem = confinedNotice(fmt.Sprintf("the statusLine %q (from %s)", sl.Command, out.where), v.Refusal)
			return out
		}
		out.Unconfined = true
		out.Problem = fmt.Sprintf(`the statusLine %q (from %s) runs outside the sandbox ("sandbox": false): with your rights, on files the model may have written (a script, a config its program reads); remove the key to confine it as Bash commands are`, sl.Command, out.where)
	}
	return out
}

// StatusLine is the command of the settings' statusLine: a terminal UI
// runs it with RunStatusLine and shows the first line it prints. Empty
// when no settings file sets one, or the one that wins is not a command.
func (s *Session) StatusLine() string { return s.sessionStatusLine().Command }

// sessionStatusLine is statusLine judged once for the session: the
// settings and the judgement's inputs are the start's.
func (s *Session) sessionStatusLine() statusLineSpec {
	s.statusLineOnce.Do(func() { s.sl = s.statusLine() })
	return s.sl
}

// openStatusLine tells the user, once at the start, about the
// statusLine's "sandbox" key (as openHooks does about hooks'): an
// opt-out honoured, or one that is not and why. Without a sandbox every
// command runs unconfined and the start-up message says so already.
func (s *Session) openStatusLine() {
	if sl := s.sessionStatusLine(); sl.Problem != "" && (s.sandbox != nil || !sl.Unconfined) {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", sl.Problem)
	}
}

// errNoStatusLine is RunStatusLine's error when there is nothing to run.
var errNoStatusLine = errors.New("cohort: the settings set no statusLine command")

// RunStatusLine runs the statusLine command once, stdin on its stdin, in
// the session's directory, and returns what it printed on stdout. It runs
// as a command hook does: in the session's sandbox (the writing profile of
// the cwd, the sandbox's TMPDIR), with the hooks' environment, in its own
// process group stopped after 5 s; unconfined only when its "sandbox":
// false is honoured (statusLine) or the session has no sandbox. A sandbox
// that cannot start is an error: it never runs unconfined instead.
func (s *Session) RunStatusLine(ctx context.Context, stdin []byte) ([]byte, error) {
	sl := s.sessionStatusLine()
	if sl.Command == "" {
		return nil, errNoStatusLine
	}
	cwd, project := s.Process.Cwd, s.Process.ProjectRoot
	env := append(append(s.childEnviron(), s.settingsEnvQuiet()...), "COHORT_PROJECT_DIR="+project, "CLAUDE_PROJECT_DIR="+project)
	var launcher proc.Launcher
	if s.sandbox != nil && !sl.Unconfined {
		l, err := s.hookSandbox().Launcher(ctx, cwd, nil)
		if err != nil {
			return nil, fmt.Errorf("cohort: the sandbox could not confine the statusLine %q (%w); it was not run unconfined instead", sl.Command, err)
		}
		launcher, env = l, append(env, s.sandbox.Env()...)
	}
	out := proc.NewCapture(64 << 10)
	_, err := proc.Run(ctx, proc.Command{Path: "/bin/sh", Args: []string{"-c", sl.Command}, Dir: cwd, Env: env,
		Stdin: bytes.NewReader(stdin), Stdout: out, Timeout: statusLineTimeout, NewSession: true, Launcher: launcher})
	return []byte(out.String()), err
}

// configuredScripts are the files the session's configured programs that
// run in its cwd execute besides hooks: the statusLine's script, those
// of the stdio MCP servers that run outside the sandbox
// (mcp.Spec.Unconfined), and the Permissions.PromptCommand program's
// (it runs outside the sandbox and answers the model's permission
// prompts: rewritten, it would approve whatever the model asks). They
// are protected as hook scripts are (hookScripts).
//
// Only scripts that exist are listed: a protected file's whole directory
// is protected (permission.Checker.ProtectedFile), and a word that names
// nothing (a Windows path such as C:\Users\…\status-line.py read as a
// relative name) would otherwise protect the project's top folder.
func (b *Plan) configuredScripts() []string {
	var out []string
	if sl := b.statusLine(); sl.Command != "" {
		out = hook.ScriptsOf(sl.Command, b.Process.ProjectRoot, b.Process.Cwd)
	}
	if c := b.Permissions.PromptCommand; c != "" {
		out = append(out, hook.ScriptsOf(c, b.Process.ProjectRoot, b.Process.Cwd)...)
	}
	for _, spec := range b.mcpSpecsQuiet() {
		if spec.Unconfined() {
			out = append(out, hook.ScriptsOf(hook.CommandLine(spec.Command, spec.Args...), b.Process.ProjectRoot, b.Process.Cwd)...)
		}
	}
	out = slices.DeleteFunc(out, func(p string) bool {
		_, err := os.Lstat(p)
		return err != nil
	})
	return out
}

// mcpSpecsQuiet is mcpSpecs without reporting problems (openMCP does).
func (b *Plan) mcpSpecsQuiet() []mcp.Spec {
	specs, _ := mcp.Load(b.mcpLoadConfig())
	return b.mcpJudged(specs, nil)
}
