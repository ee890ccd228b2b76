package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/settings"
)

// Sandbox confines command hooks (Config.Sandbox): the session's sandbox,
// as hooks use it. See "The sandbox" in the package doc.
type Sandbox interface {
	// Launcher starts processes confined as the approved Bash commands of
	// an agent working in cwd are (its writing profile), and lets them
	// write the files the hook's command names as its output (files,
	// Command.OutputTargets) that the sandbox grants (Grants); the others
	// are left out, as the start of the session said.
	Launcher(ctx context.Context, cwd string, files []string) (proc.Launcher, error)
	// Env is added to a confined command's environment (its TMPDIR).
	Env() []string
	// Explain names the writes the sandbox refused that output (a
	// command's stdout and stderr) reports, for a command run in cwd, and
	// what would allow each; "" when there are none.
	Explain(output, cwd string) string
}

// trustedScopes are the settings layers whose "sandbox": false is
// honoured: files in the user's home and the project's .cohort/ and
// .claude/, which the sandbox keeps read-only for every command and the
// file tools write only with a person's approval. A --settings document
// may be any file, one the model wrote included, and an agent
// definition may come from the command line.
var trustedScopes = []settings.Scope{settings.ScopeUser, settings.ScopeProject, settings.ScopeLocal}

// sandboxOpt reads a hook's "sandbox" key into c.
func (o origin) sandboxOpt(key string, f member, c *Command) *settings.Problem {
	var on bool
	if err := json.Unmarshal(f.val, &on); err != nil {
		return o.problem(f.off, key, "must be true or false, not %s; the hook runs in the sandbox", kindOf(f.val))
	}
	switch {
	case on:
		return nil
	case c.Type != TypeCommand:
		return o.problem(f.off, key, "applies to command hooks only (a %s hook starts no process); it is ignored", c.Type)
	case !slices.Contains(trustedScopes, o.scope):
		where := "an agent definition"
		if o.scope != "" {
			where = "a --settings document"
		}
		return o.problem(f.off, key, `"sandbox": false is honoured only in user, project and local settings files, which commands cannot write; this hook comes from %s and runs in the sandbox`, where)
	case o.approved:
		return o.problem(f.off, key, `"sandbox": false is not honoured in a settings file that lies where agents' commands can write: your approval covers this file's content, not the programs its hooks run, which agents can rewrite there; the hook runs in the sandbox (move the hook to the project's top-level or your user settings to run it unconfined)`)
	}
	c.Unsandboxed = true
	return nil
}

// Unsandboxed lists the command hooks that run outside the sandbox
// ("sandbox": false), by event, in configuration order.
func (s *Set) Unsandboxed() []*Command {
	return s.commands(func(c *Command) bool { return c.Unsandboxed })
}

// commands lists the command hooks keep accepts, by event, in
// configuration order.
func (s *Set) commands(keep func(*Command) bool) []*Command {
	if s == nil {
		return nil
	}
	var out []*Command
	for _, ev := range slices.Sorted(maps.Keys(s.byEvent)) {
		for _, c := range s.byEvent[ev] {
			if c.Type == TypeCommand && keep(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// UnsandboxedNotice is what the user is told once, at the start of a
// session with a sandbox, about a command hook that runs outside it.
func (c *Command) UnsandboxedNotice() string {
	return fmt.Sprintf(`the %s hook %q%s runs outside the sandbox ("sandbox": false): with your rights, on files the model may have written (a Makefile, a script, a config its program reads); remove the key to confine it as Bash commands are`,
		c.Event, c.Cmd, c.configuredAt())
}

// refusal is the note for the user about a confined hook whose writes the
// sandbox refused (notes from Sandbox.Explain); "" when there are none.
func refusal(ev Event, c *Command, notes string) string {
	if notes == "" {
		return ""
	}
	where := "its settings file"
	if c.Source != "" {
		where = c.Source
	}
	return fmt.Sprintf(`the %s hook %q%s ran in the sandbox, which refused it: %s; or set "sandbox": false on this hook in %s to run it unconfined (on files the model may have written)`,
		ev, c.Cmd, c.configuredAt(), strings.ReplaceAll(notes, "\n", "; "), where)
}
