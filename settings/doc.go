// Package settings loads Cohort's settings files and keeps every value
// together with the file it came from.
//
// The files have Claude Code's shape: a JSON object with "permissions"
// ({allow, ask, deny, defaultMode, additionalDirectories}), "hooks", "env",
// "model", "flags" and any other keys. This package interprets only what is
// common to all readers (where files live, their precedence, JSON syntax,
// positions for error messages) and the "permissions" lists it has to
// protect; every other section is kept raw per source so the package that
// owns it (hooks, flags, models, worktrees) decodes it with [Collect] or
// [Settings.Section].
//
// # Sources and precedence
//
// Lowest to highest (a later source wins for scalar values; lists such as
// permission rules concatenate, each entry remembering its file):
//
//  1. user: ~/.claude/settings.json (compatibility), then $COHORT_HOME/settings.json
//  2. project: .claude/settings.json, then .cohort/settings.json
//  3. local: .claude/settings.local.json, then .cohort/settings.local.json
//  4. the command line (added by the caller, not by this package)
//
// The .claude files are read unless COHORT_CLAUDE_COMPAT=0 (also "false",
// "off", "no").
//
// Project and local files are looked up in two directories: the project
// root (the nearest ancestor of the working directory holding a .git entry;
// the working directory itself outside a repository) and then the working
// directory when it differs, so a file closer to where the user started
// wins. Within one directory the .cohort file beats the .claude one. A path
// reached twice (for example when the working directory is the home
// directory, so .cohort/settings.json is also $COHORT_HOME/settings.json) is
// read once, at its lowest precedence.
//
// # Files an agent could have written
//
// With Env.Trust set (internal/configtrust), a settings file whose
// directory lies where an earlier session's commands could write
// (strictly inside a project a session ran in: src/.cohort/settings.json,
// or a src/ an agent made a project with src/.git; an additional write
// root) is obeyed only when a person approved its exact content (`cohort
// config trust FILE`). Until then it may only restrict: its
// permissions.deny and permissions.ask rules and
// disableBypassPermissionsMode apply (dropping a deny rule the user may
// have written would be less safe), and nothing else in it is read — no
// allow rule, defaultMode, additionalDirectories, hooks, env, sandbox,
// MCP servers or approvals, model. [Source.Untrusted] says why, and one
// [Problem] names the file, the tree it lies in and the command. User
// files are checked the same way (a HOME inside a project).
//
// # Errors and failing closed
//
// A file that is missing is simply not a source. A file that exists but
// cannot be read or is not valid JSON is reported as a [Problem] naming the
// file, the line and column and what to do, and is skipped: the other files
// still load. Because a broken file may have held deny rules, such a source
// is still listed by [Settings.Permissions] with Incomplete set; the
// permission package then refuses to auto-allow anything until the file is
// fixed. The same happens when "permissions", "deny" or "ask" has the wrong
// JSON type (null counts as an empty list). An empty file is an empty
// object. Problems are warnings for the caller to print; Load itself
// never fails.
//
// A .claude or .cohort that is not a directory (a plain file, a FIFO, a
// link to one) is bad input, not a broken file: it is one Problem naming
// it and saying to remove it, and its layer's files are treated as
// absent, not as incomplete. Failing closed there would be wrong and is
// not needed: a command can create such a file where the directory is
// missing (the sandbox lets no directory or link be made there, but it
// cannot refuse a regular file by name), and every later session would
// then ask before every tool call, a lock-out that outlives the session.
// And no rule can be missing: a file that is not a directory contains no
// settings file, so the layer is exactly as if the name did not exist —
// whoever could replace a real settings directory with a file could as
// well remove the settings file in it, which is the ordinary absent case.
// A directory that exists but cannot be read still fails closed.
//
// # Writing
//
// [Edit] rewrites one settings file atomically (temporary file and rename,
// under a lock file) and keeps the order of top-level keys; it refuses to
// touch a file it cannot parse, so a user's broken file is never clobbered.
package settings
