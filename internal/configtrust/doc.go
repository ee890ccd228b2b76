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
// $COHORT_HOME/trust/roots.json lists each writable root once (resolved
// path, whether its top is frozen, when a session first made it writable),
// appended under $COHORT_HOME/trust/lock. COHORT_HOME is never a writable
// root of a sandboxed command (a COHORT_HOME placed inside a project is
// the user's choice to give the model their settings; see the redteam
// row o9-cohome-in-project). The session's private TMPDIR is not recorded:
// it is the session's alone and removed at its end (swept at the next
// start when the session was killed).
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
// content: $COHORT_HOME/trust/approved.json keeps a SHA-256 per resolved
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
// A registry that cannot be read fails closed: every project directory is
// treated as model-writable until it is fixed.
package configtrust
