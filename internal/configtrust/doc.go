// Package configtrust keeps one invariant: configuration a model could
// have written is never obeyed without a person.
//
// A session's sandbox lets its commands and file tools write some trees
// (the working directories, additional directories, sandbox.allowWrite,
// the project's memory, the user's cache). Cohort freezes the top of a
// working directory (its .cohort, .claude and .mcp.json), but not what
// lies below it: a model may write src/.cohort/settings.json, make src a
// project of its own with a src/.git, and wait for the user's next session
// started there. So every session records the trees it made writable, and
// every later session asks, before it obeys a project file, whether the
// file's directory lies in one of them.
//
// # The registry
//
// trust/roots.json lists each writable root once (resolved path, whether
// its top is frozen, when a session first made it writable), appended
// under trust/lock. COHORT_HOME is never a writable root of a sandboxed
// command (a COHORT_HOME placed inside a project is the user's choice to
// give the model their settings; see the redteam row
// o9-cohome-in-project). The session's private TMPDIR is not recorded:
// it is the session's alone and removed at its end (swept at the next
// start when the session was killed).
//
// # Where the record is kept
//
// A record kept only in $COHORT_HOME/trust would make the decision depend
// on which COHORT_HOME a session runs with: the user's next session
// started with another one (a second profile, a fresh install, a CI job's,
// or one an .envrc or a wrapper script names) would know no root and obey
// what a model planted (the redteam row o10-cohome-switch). So the
// registry (roots.json, approved.json, tops.json, each under its lock)
// lives in two places (Places, At):
//   - the user's: $XDG_STATE_HOME/cohort/trust, or
//     ~/.local/state/cohort/trust when XDG_STATE_HOME is unset or not an
//     absolute path (UserDir). It belongs to the user account, not to a
//     COHORT_HOME: every Cohort home of the user reads and writes it;
//   - COHORT_HOME's trust/, as before: what older Cohort versions sharing
//     that home read and wrote.
//
// Every session writes its roots (and its top-level records) to both, and
// reads both as one: a root recorded in either counts (open where either
// says so), an approval is the latest either holds (`cohort config trust`
// writes both), and a top-level file is obeyed only if no record says it
// was written. A registry that cannot be read fails closed, as below; one
// that cannot be written is a warning at the session's start (its
// agents' writes may then be obeyed later without you) and leaves the
// other written.
//
// The user's registry has the invariant COHORT_HOME has: no sandboxed
// command can write it, whatever the permission checker concludes. It
// lies outside every writable root by default (~/.local/state is not the
// cache); where XDG_STATE_HOME or HOME places it inside one (a home in a
// checkout), the sandbox binds it read-only whole, with every folder above
// it up to the root bound onto itself so it cannot be renamed away
// (sandbox.Config.TrustDir; the session makes it first, since a path that
// does not exist cannot be bound). The file tools treat it as a protected
// path (as $COHORT_HOME), and a prompt never offers to make it writable.
// What commands wrote there before it became the registry (an
// XDG_STATE_HOME pointed into the cache later) is not believed either: a
// registry lying in a root whose top is not frozen (the cache,
// sandbox.allowWrite), by the records of them all, adds its roots (more
// caution) but vouches for no file. One inside a working directory is
// believed (a session started in the home holds ~/.local/state and
// ~/.cohort, and binds both read-only): an XDG_STATE_HOME pointed into a
// project that sessions ran in before is the person's risk, as a
// COHORT_HOME there is.
//
// What a demanding user meets:
//   - two COHORT_HOMEs on one machine (two accounts, or work and
//     personal) under one Unix user share the record: a tree one of them
//     let agents write is model-writable for the other too, and a file
//     approved under one is approved under the other (the approval is
//     the person's word on the file's bytes, not on an account). Two Unix
//     users have two records: what another user's agents wrote is that
//     user's to vouch for.
//   - CI: a job with a fresh HOME starts with an empty record, so the
//     checkout's configuration is obeyed as committed (no agent of this
//     machine wrote it); sessions within the job share the record. A job
//     that keeps HOME between runs keeps it too.
//   - a read-only HOME (or state directory): the record cannot be
//     written, so every session warns that its agents' writes may be
//     obeyed later without approval, and `cohort config trust` fails
//     naming the file; set XDG_STATE_HOME to a writable directory outside
//     your projects.
//   - XDG_STATE_HOME and COHORT_HOME both pointed at fresh directories
//     (by the person, or by an .envrc a model wrote and the person then
//     allowed): that session starts with an empty record and trusts what
//     it finds. The environment a session starts in is the person's;
//     neither variable is taken from a settings file's env, which reaches
//     commands only.
//
// # Model-writable directories
//
// A directory D holding configuration (D/.cohort, D/.claude, D/.mcp.json,
// the user's COHORT_HOME or home) is model-writable when its resolved path
// lies strictly inside a recorded root, or is a root whose top is not
// frozen (an additional write root such as sandbox.allowWrite or the cache
// dir). D equal to a working directory's root stays trusted: the sandbox
// freezes that top in every session.
//
// # Approval
//
// A model-writable file is obeyed only when a person approved its exact
// content: trust/approved.json keeps a SHA-256 per resolved
// path, written by `cohort config trust FILE`, which shows the file first.
// A file changed since its approval is unapproved again. In an agent's
// worktree (below a frozen root's .cohort/worktrees) a file equal, byte
// for byte, to the root's own file of the same name is obeyed too: the
// worktree checks out the project's .claude/settings.json, which the
// sandbox kept from every agent, and teammates run there. Elsewhere (a
// copy in src/ with a src/.git) it is not: its relative paths and
// $CLAUDE_PROJECT_DIR would name model-written folders. Until then a
// settings file may only restrict (its permission deny and ask rules still
// apply: dropping them would be less safe), and an .mcp.json, agent
// definition or skill directory there is not loaded; each is one warning
// naming the file, the root and what to do.
//
// What an approved settings file may do is less than the person's own
// file: the approval covers its bytes, not what agents may rewrite beside
// it, nor a widening the person may not have weighed. It narrows as
// written (deny and ask rules, disableBypassPermissionsMode, the sandbox
// turned on, network "deny"); it cannot widen what agents reach or run
// with the user's rights: its env is not set (assemble's settingsEnv),
// its sandbox keys that widen (enabled false, excludedCommands,
// allowUnsandboxedCommands true, allowWrite, allowUnixSockets, network
// allowances) are not applied, nor its additionalDirectories or a
// bypassPermissions defaultMode; its allow rules skip prompts only inside
// the working directories the person's sources define and never on
// protected paths (package permission, "Files obeyed by approval"); its
// hooks, statusLine and MCP servers run in the sandbox, "sandbox": false
// not honoured (package settings, assemble's statusLine). Each entry not
// applied is reported at the start, naming the file. There is no
// apiKeyHelper or other key that runs a program outside the sandbox.
//
// What is checked: settings files (user, project, local: internal to
// package settings, so hooks, env, sandbox, statusLine, apiKeyHelper,
// MCP servers and approvals, defaultMode and additionalDirectories all
// follow), .mcp.json (package mcp) and agent definitions (package
// agentdef: they carry hooks, MCP servers and a permission mode). What is
// not: skills, custom commands, saved workflows and CLAUDE.md files. They
// are text for the model (a skill's allowed-tools grants nothing; a
// command's body is a prompt; a workflow's agents run under the session's
// rules and sandbox) and run no program outside the session's checks; a
// model that can write them could as well say the same in a file it
// reads.
//
// # Top-level files
//
// A working directory's own top is trusted because the person put its
// files there, and the sandbox keeps .cohort/ and .claude/ read-only
// whole and keeps them from being created where missing. A missing
// .mcp.json it cannot keep out (a file: only freezing the whole top
// would), so a command, or a user's hook running a module the model
// rewrote, may create one, and with the user's enableAllProjectMcpServers
// (or an approval given to a server of an earlier file) its server would
// run, unconfined if it says "sandbox": false, in the next session. The
// invariant: a top-level configuration file that appeared or changed
// while a session could write the tree is treated as a planted one.
//
// trust/tops.json keeps, per frozen root (a working
// directory), each Tracked file's SHA-256 (or its absence) as Cohort last
// saw it, whether that content appeared while a session could write the
// root ("written"), and the sessions open on the root (session id, PID
// and the process's start time, so a reused PID is not taken for it).
// A session records the files before its model runs (Begin) and again at
// its end, after every command, hook and server has stopped (End). The
// verdict on a tracked file, read afresh each time it is loaded:
//   - content approved with `cohort config trust` is obeyed;
//   - content equal to the record is obeyed unless it was "written";
//   - content that differs from the record was changed after Cohort
//     last looked: while no session is open on the root, by the person
//     (their editor, their `git checkout`, `git pull`), and it is obeyed
//     with no ceremony, and recorded as theirs at the next session's
//     start; while one is open (running, or killed with no end record),
//     perhaps by its model, and it is not obeyed.
//
// How the person's edits are told from a model's is therefore by time,
// and the limits follow from it: an edit (or a checkout) the person makes
// while a session runs on the project is taken as the model's and needs
// `cohort config trust` once (so does one made after a session was
// killed, until the next session's start brings the record up to date;
// that start drops the dead session and marks what changed as written).
// A file deleted by the person and recreated during a session is
// written, even if byte for byte what the person had: an approval of an
// MCP server given to an earlier file does not vouch for the file now.
// Content already there when Cohort first records a root (before this
// record existed) is taken as the person's. A process outliving its
// session, or another program the model left to run as the user, would
// write outside this window; the sandbox and the session's process
// reaping are what keep those from existing. In an agent's worktree a
// file equal to the root's own is obeyed only while the root's file is.
//
// Tracked is only .mcp.json: the settings files and agent definitions at
// the top lie in .cohort/ and .claude/, which a sandboxed command cannot
// write, and which Cohort itself changes during a session (an "always
// allow" answer, `cohort mcp approve` write local settings), so tracking
// them by time would make the person's own approvals suspect. With the
// sandbox turned off by the user, commands can write them; that is the
// user's choice, and the permission checks stand alone (the file tools
// ask a person for those paths in every mode).
//
// A registry that cannot be read fails closed: every project directory is
// treated as model-writable until it is fixed.
package configtrust
