// Package assemble wires a session together, in three steps:
//
//  1. Package cohort translates its Config, once, into a Plan: each value
//     grouped with the part that uses it, typed (the teammates' backends
//     stay a map, the API key a value, not an environment variable).
//     Resolve completes the plan from the process, the settings files and
//     the feature flags, writing nothing.
//  2. Open opens the parts the plan describes — the model and its
//     providers, permissions, the sandbox, hooks, tasks, the team layer,
//     worktrees, skills, MCP servers, the crew and its lead (or the
//     teammate this process runs), memory and dreams, the remote queue,
//     the trace, workflows — and returns them as a Session, which
//     package cohort drives: Turn runs a prompt, the control methods
//     reach one agent, Snapshot lists them all.
//  3. A teammate in a process of its own gets its configuration as one
//     document (Plan.Team.Configure: the Config it inherits, its place
//     in the team, the credentials it needs) in a file of mode 0600 that
//     it reads and removes: nothing of it is on a command line.
//
// The package knows the Config's field names (its errors name them, as
// Config.Model, for package cohort's ConfigError) but not the command
// line's flags: internal/arch checks that none is named here.
//
// Decisions the spec leaves open:
//
//   - Open's order writes nothing under Cohort's home until the
//     configuration has been checked: the session to resume, the model,
//     the permissions, the remote settings and the agent definitions
//     come first; an error there leaves no file behind.
//   - The programs the session starts (hooks, MCP servers, git, a private
//     tmux server) get the process's environment with COHORT_HOME set to
//     the session's home when the program chose one, so that a cohort they
//     run finds the same state; credentials are scrubbed from the ones
//     that run the model's commands (internal/childenv).
//   - The tool array is ordered for the prompt cache, not by kind: the
//     lead's own tools (leadOnly) go after the ones other roles are offered
//     too, so a teammate's array is the start of the lead's and reads the
//     cache entry the lead's first request wrote (package crew places that
//     breakpoint). Claude Code lists Agent first; the model sees the same
//     definitions either way.
//   - An idle lead's wake-up is coalesced: once a notification arrives,
//     the lead waits until nothing new has come for 25 ms (at most eight
//     such windows, and not at all when nothing else is outstanding), so
//     that agents finishing together make one turn; every wake-up is a
//     model turn that re-sends the lead's whole history.
//     COHORT_NOTIFY_COALESCE sets the window ("0" turns it off).
//   - Every agent gets the same model, an llm.Router over one client per
//     provider: the lead's provider answers plain ids, "provider/model"
//     reaches that provider whatever the lead runs on. A provider that is
//     not configured fails only the agents that use it, with the reason.
//     A scripted model (scripted:FILE) is the fake API on a loopback port
//     in this process, serving every provider's protocol.
//   - The settings' "remote" object is read from the user's settings and
//     the session's own layers only, never from a project's files: a
//     cloned repository must not send the session's code to a server of
//     its choosing.
//   - A message from another session (its socket, uds:) from a session
//     the person started reaches the lead at once, with its priority; any
//     other sender's message reaches it only once someone who answers the
//     session's permission prompts approves it (hold.go, on package
//     holdgate, which bridge: will reuse). "Started by the person" is
//     package sessionorigin's: the kernel names the sending process
//     (SO_PEERCRED); it must be a session's own process, with an origin
//     record beside its socket saying no session's process was among its
//     ancestors when it started, and none is now. So a session started in
//     a terminal, by tmux or by an SDK host the person runs is trusted; a
//     session a model started with Bash, and any program (nc, a script),
//     is held. A held message is put to the person as a SendMessage prompt
//     showing the sender, the text and why it was held, one at a time in
//     arrival order, and only then queued with its priority. The terminal
//     UI asks the person; an SDK host's canUseTool decides; a background
//     session shows as waiting in cohort agents until someone attaches. A
//     session nobody can answer for (print mode) refuses every held
//     message, in every permission mode, and the sender's SendMessage
//     says so: nothing held is approved on its own. A subscription
//     (notify_when_idle without a message) delivers nothing to the model
//     and is not held; a held message still waiting at Close is dropped.
//     A print-mode session whose model asked for an idle notice
//     (notify_when_idle) does not end when its model ends its turn to
//     wait: it waits for the notice, reading the other session's reply
//     meanwhile, until that session ends or COHORT_IDLE_NOTICE_WAIT (10
//     minutes) has passed, and says on stderr why it stopped (notices.go).
package assemble
