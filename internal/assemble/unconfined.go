package assemble

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/permission"
)

// The programs the user lets run outside the sandbox ("sandbox": false on
// a command hook, a stdio MCP server or the statusLine) and the
// Permissions.PromptCommand program are judged by hook.Judge: each runs
// unconfined only when nothing it is started with lies in a tree agents
// write and its shape is one Cohort knows loads no code from its working
// directory; otherwise it runs in the sandbox and the user is told which
// entry, why and what to change (confinedNotice). The prompt command,
// whose answers are what matters, is not run at all then: every prompt
// is denied (promptCommandJudged). The same judgement runs in every
// session, with the environment the program gets (Cohort's own, the
// settings', its entry's), so a program refused once is refused in the
// session that would run it. It protects nothing: what an unconfined
// program is started with lies outside the writable trees, and what its
// code computes there is the user's own opt-out.

// writableRoots are the roots agents of the session write, absolute: the
// project, the cwd, the added directories (Permissions.AddDirs and the settings'
// permissions.additionalDirectories) and the sandbox.allowWrite roots.
func (b *Plan) writableRoots() []string {
	out := []string{b.Process.ProjectRoot, b.Process.Cwd}
	add := func(d, base string) {
		if rest, ok := strings.CutPrefix(d, "~/"); ok && b.Process.Paths.Home != "" {
			d = filepath.Join(b.Process.Paths.Home, rest)
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		out = append(out, filepath.Clean(d))
	}
	for _, d := range b.Permissions.AddDirs {
		add(d, b.Process.Cwd)
	}
	if b.Settings.Loaded != nil {
		for _, p := range b.Settings.Loaded.Permissions() {
			for _, d := range p.Value.AdditionalDirectories {
				add(d.Value, p.Source.Root)
			}
		}
	}
	for _, d := range b.sandboxConfig().allowWrite {
		add(d, b.Process.Cwd)
	}
	return out
}

// judge is hook.Judge for a program of the session run in its cwd, env
// its entry's own variables.
func (b *Plan) judge(cmd string, env []string) hook.Verdict {
	full := append(append(childenv.Scrub(b.childEnviron()), b.settingsEnvQuiet()...), env...)
	return hook.Judge(hook.Program{Line: cmd, Env: full, ProjectDir: b.Process.ProjectRoot, Dir: b.Process.Cwd, Writable: b.writableRoots()})
}

// confinedNotice is what the user is told about an entry with "sandbox":
// false that runs in the sandbox all the same (hook.Verdict.Refusal).
func confinedNotice(what, why string) string {
	return fmt.Sprintf(`%s has "sandbox": false but runs in the sandbox: %s. To run it unconfined, keep the script it runs (and its interpreter, and every path its command line and search-path variables name) outside the folders agents write, and start it as an interpreter running that script (python with -P for -c or -m) or as a program Cohort knows reads no code from its working directory; what that script then loads is your own choice`, what, why)
}

// mcpJudged confines the unconfined servers of specs that the judgement
// refuses (their "sandbox" key is dropped), reporting each to warn.
func (b *Plan) mcpJudged(specs []mcp.Spec, warn func(string)) []mcp.Spec {
	for i, s := range specs {
		if !s.Unconfined() {
			continue
		}
		if v := b.judge(hook.CommandLine(s.Command, s.Args...), envList(s.Env)); v.Refusal != "" {
			specs[i].Sandbox = nil
			if warn != nil {
				warn(confinedNotice(fmt.Sprintf("MCP server %q (%s)", s.Name, s.Source), v.Refusal))
			}
		}
	}
	return specs
}

// hooksJudged confines the unsandboxed hooks of set that the judgement
// refuses, reporting each to warn.
func (b *Plan) hooksJudged(set *hook.Set, warn func(string)) {
	for _, c := range set.Unsandboxed() {
		if v := b.judge(c.Cmd, nil); v.Refusal != "" {
			c.Unsandboxed = false
			if warn != nil {
				warn(confinedNotice(fmt.Sprintf("the %s hook %q (from %s)", c.Event, c.Cmd, c.Source), v.Refusal))
			}
		}
	}
}

// envList is an env map as NAME=value entries, sorted.
func envList(env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// promptCommandJudged judges the Permissions.PromptCommand program, which
// runs with the user's rights and whose answers approve what the model
// asks: confining it would not help (a rewritten approver answers
// "allow" from inside the sandbox too), so a program the judgement
// refuses is not run at all. Every prompt is then denied with the reason
// (promptDenied), and the user is told once at the start.
func (s *Session) promptCommandJudged() {
	c := s.Permissions.PromptCommand
	if c == "" {
		return
	}
	if v := s.judge(c, nil); v.Refusal != "" {
		s.promptRefused = fmt.Sprintf("the permission prompt command %q is not run: %s. Keep the program it runs outside the folders agents write (and start Python with -P for -c or -m), or it would approve what the model asks with code the model wrote", c, v.Refusal)
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s; every permission prompt is denied\n", s.promptRefused)
	}
}

// promptDenied is the Prompter of a session whose prompt command the
// judgement refused: it denies every prompt, saying why.
type promptDenied string

// Prompt denies.
func (p promptDenied) Prompt(_ context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	return permission.PromptDecision{Message: fmt.Sprintf("Permission to use %s was denied: %s.", req.ToolName, string(p))}, nil
}
