package mcp

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohort-dev/cohort/internal/proc"
)

// Launch says how a stdio server's process starts (Options.Launch): the
// launcher that starts it — the session's sandbox in the writing profile
// of dir, or, for a server that may run outside it (Spec.Unconfined) or a
// session without one, the launcher that reaps it with the session — and
// what its environment gets on top of env (Options.Env and the server's
// own entries). A nil launcher with no error starts the server as Cohort's
// child. An error fails the server's start: it never runs unconfined
// instead.
type Launch func(ctx context.Context, s Spec, dir string, env []string) (proc.Launcher, []string, error)

// trustedScopes are where a "sandbox": false is honoured: user settings
// (the home directory is read-only to commands), local settings and the
// project's files (.mcp.json, .cohort/ and .claude/ are protected paths,
// read-only to commands and written by the file tools only with a
// person's approval; a project server runs only once approved by a
// fingerprint that covers the flag). Not --mcp-config or --settings (any
// file, one the model wrote included), not an agent definition (the
// model may write one in the project, and one in the home may have been
// written by a session with the sandbox off).
var trustedScopes = []string{ScopeUser, ScopeLocal, ScopeProject}

// optsOut reports whether the definition says "sandbox": false.
func (s Spec) optsOut() bool { return s.Sandbox != nil && !*s.Sandbox }

// Unconfined reports whether the server runs outside the session's
// sandbox: a stdio server whose definition says "sandbox": false in a
// file the model cannot write (trustedScopes).
func (s Spec) Unconfined() bool {
	return s.Type == TypeStdio && s.optsOut() && slices.Contains(trustedScopes, s.Scope) && !s.Approved
}

// SandboxNotice is what the user is told once, when the session starts
// the server, about its "sandbox" key: an opt-out that is honoured (it
// runs with the user's rights), one that is not (and why), or a key on a
// server that starts no process; "" when there is nothing to say.
// confined says whether the session has a sandbox at all.
func (s Spec) SandboxNotice(confined bool) string {
	switch {
	case !s.optsOut():
		return ""
	case s.Type != TypeStdio:
		return fmt.Sprintf(`MCP server %q (%s): "sandbox": false applies to stdio servers only (this one starts no process); it is ignored`, s.Name, s.Source)
	case s.Approved && s.Type == TypeStdio && slices.Contains(trustedScopes, s.Scope):
		return fmt.Sprintf(`MCP server %q (%s): "sandbox": false is not honoured in a file that lies where agents' commands can write: your approval covers the file's content, not the program it runs, which agents can rewrite there; the server runs in the sandbox`,
			s.Name, s.Source)
	case !s.Unconfined():
		return fmt.Sprintf(`MCP server %q (%s): "sandbox": false is honoured only in user, local and project files (settings, .mcp.json), which commands cannot write; this server comes from %s and runs in the sandbox`,
			s.Name, s.Source, scopeWords(s.Scope))
	case confined:
		return fmt.Sprintf(`MCP server %q (%s) runs outside the sandbox ("sandbox": false): with your rights, on files the model may have written (a module, a script, a config its program reads); remove the key to confine it as Bash commands are`,
			s.Name, s.Source)
	}
	return ""
}

func scopeWords(scope string) string {
	switch scope {
	case ScopeAgent:
		return "an agent definition"
	case ScopeCLI:
		return "--mcp-config or a --settings document"
	case ScopeDynamic:
		return "the program hosting the session"
	}
	return "the " + scope + " scope"
}
