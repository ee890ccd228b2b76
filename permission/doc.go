// Package permission decides whether a tool call may run: permission modes,
// Claude Code compatible rules, the evaluation order, and the prompters that
// answer when the answer is "ask".
//
// # Evaluation
//
// [Checker.Check] looks at deny rules, then ask rules, then allow rules,
// then the mode's default. The first that applies decides. Deny rules win
// in every mode, bypassPermissions included; so do ask rules (a user who
// wrote one wants to be asked). Mode defaults:
//
//   - default: read-only tools run when every path they touch is inside the
//     working directories (the session's cwd plus additionalDirectories and
//     --add-dir); anything else asks.
//   - acceptEdits: as default, and Edit/Write/NotebookEdit inside the working
//     directories run, except on protected paths (.git/, .claude/,
//     .mcp.json, the scripts configured hooks run and their directories
//     (Config.Protected; a script at a working directory's top protects
//     itself alone), .cohort/settings*, .cohort/agents/, $COHORT_HOME
//     outside project memory), which ask: editing them would let an agent
//     grant itself permissions or run code outside the sandbox.
//   - plan: read-only calls as in default; every other call is denied with a
//     reason telling the model it is planning, even when an allow rule
//     matches. Agent, EnterPlanMode, ExitPlanMode (asks: the user approves
//     the plan), AskUserQuestion, TodoWrite, SendMessage, TaskGet, TaskList
//     and TaskOutput keep their usual treatment.
//   - dontAsk: as default, with every ask turned into a deny.
//   - bypassPermissions: everything that no deny or ask rule stops, but
//     it skips prompts, never the bounds: file tools writing outside the
//     working and memory directories, or on a protected path, ask as in
//     acceptEdits, and so does dangerouslyDisableSandbox (see Bash). An
//     allow rule lets such a write through only when it names the path:
//     for a protected path, its pattern must name the protected part
//     (".claude", ".git", ".mcp.json", ".cohort", a hook script's name);
//     "Edit" or "Edit(**)" do not.
//   - bubble (internal, forks): as default, with every ask marked
//     [Decision.Bubble] for the caller to route to the parent's approver.
//
// A settings file's defaultMode "auto" (Claude Code's mode in which a
// classifier approves calls) has no counterpart: it is read as default with
// a warning, which asks where auto might have approved. Other unknown
// values are read as default too, with a suggestion for near misses
// ("allowEdits").
//
// Memory directories ([Checker.AddMemoryDir]: the project's memory under
// $COHORT_HOME/projects/<slug>/memory, an agent definition's own) lie
// outside the working directories, so without a carve-out every save would
// ask, and be denied in print mode. The built-in file tools may read and
// write inside them without asking in every mode but plan (where only the
// reads run); deny and ask rules still come first, paths are judged by
// their resolved form (a link inside the memory dir pointing out of it
// does not count), and Bash gets nothing from it.
//
// Agent calls need no approval by default (the subagent's own calls are
// checked), nor do the coordination tools that only steer the agent's own
// team and tasks: EnterPlanMode, SendMessage, TaskOutput, TaskStop,
// TeamCreate, TeamDelete and the shared task-list tools — but a
// SendMessage to a Unix socket that is not a Cohort session's
// (uds:<path> outside $COHORT_HOME/sessions) asks in every mode, as a
// write outside the working directories does, and the tool refuses it
// unless a person or an allow rule approved the call. WebFetch,
// WebSearch and MCP tools ask by default even when they claim to be
// read-only: fetching and searching are ways out for data, and MCP
// read-only hints come from the server. A call whose tool is not Bash
// uses Request.ReadOnly (the tool's traits).
//
// # Rules
//
// "Tool" covers every call of a tool; "Tool(specifier)" narrows it:
//
//   - Bash: "git diff:*" (the words "git diff" and any further words, so not
//     "git diffx"), "npm test" (exactly that command), "npm run *" (a
//     trailing lone * is the newer spelling of :*; a lone * elsewhere
//     matches any number of words, and * inside a word any characters).
//     Specifiers are parsed with the shell parser and compared word by word
//     with the parsed command, so quoting and spacing do not matter. A
//     specifier that is not one simple command ("ls | wc") is compared with
//     the whole command line as text (exactly for allow rules).
//   - Read, Edit, MultiEdit, Write, NotebookEdit, Glob, Grep, LS: gitignore-style paths.
//     "//abs/path" is absolute, "~/x" is in the home directory, "/x" is
//     relative to the settings file's project directory (the directory
//     holding .cohort/ or .claude/; for user settings the directory holding
//     the file; for the command line the cwd), "x" and "./x" are relative to
//     the agent's cwd, as in Claude Code. Deny and ask rules with relative
//     patterns are also tried against the session's cwd and the settings
//     file's project directory, so a rule protects what its author meant
//     wherever an agent runs. A pattern without a slash ("*.env") matches
//     at any depth; a pattern for a directory covers everything inside;
//     "dir/" matches directories only; "**" crosses directories. Edit rules
//     cover Write, NotebookEdit and MultiEdit (all file-editing tools), Read
//     rules cover Glob, Grep and LS, and an Edit allow rule also allows
//     reading.
//   - WebFetch(domain:example.com): exactly that host (any port);
//     WebFetch(domain:*.example.com): any subdomain, not the domain itself.
//   - mcp__server covers all of a server's tools, mcp__server__tool one,
//     mcp__server__get_* those with the prefix. MCP rules take no specifier.
//   - Agent(name): calls with that subagent_type (omitted means
//     general-purpose). "Task" is accepted as the Agent tool's old name.
//   - Any other tool: the specifier must equal Request.Subject.
//
// # Paths
//
// Paths are made absolute against the agent's cwd and resolved the way the
// kernel opens them (symbolic links component by component, ".." applied
// after a link), with the part that does not exist yet appended. Deny and
// ask rules match if either the written or the resolved path matches; allow
// rules and the working-directory test use the resolved path. So a symlink
// inside the project that points into a denied directory is denied, and
// ".." cannot climb out of an allowed one. A path that reaches a
// process's /proc entry (/proc/self, /proc/thread-self, /proc/PID, and
// /dev/fd/N, /dev/stdin and the like, which are links there) is not
// resolved at all: it names what the process that opens it sees (its
// cwd, root, descriptors, environment), not what the checker sees, so it
// counts as unknown (ProcessPath): never allowed by the mode or inside
// the working directories, and asked about (fail closed) by every tool.
//
// # Bash
//
// A command line is read by package shellcmd, the shell analysis this
// package shares with the worktree guard: every simple command is
// extracted across ;, &&, ||, |, newlines, subshells, { }, if/while/for/case
// bodies, function bodies (where defined and again where called), command
// and process substitutions and here-documents. Wrappers are looked through
// and kept as layers: env, nohup, nice, timeout, stdbuf, time, command,
// builtin, exec, setsid, ionice, xargs, sudo, doas, chroot, watch, busybox,
// find -exec, and shells with -c (bash, sh, zsh, dash, ksh, mksh, ash; the
// script is parsed recursively), plus eval, alias and trap, whose text is
// parsed as a script. Assignments before a command are dropped from its
// words ("FOO=1 rm x" is the command "rm x"). Words are compared after
// quote removal and brace expansion ("'r'm" is rm, "{rm,-rf,x}" is
// "rm -rf x"). This package adds the policy: rule matching, the read-only
// list and which variables are harmless.
//
// Read-only commands are a table of per-command option allow-lists
// (readonly.go): an option a command's list does not hold makes the line
// not read-only, and an option that reads a file (date -f, grep -f,
// jq --slurpfile) names a path that the read rules and the working
// directories apply to like a positional one. Options that write, run
// programs or read lists of further files (sort --files0-from,
// sha256sum -c) are not listed. A word known only at run time, or a
// pattern that may expand to a name starting with "-", is refused where
// an option of the real program could read, write or run.
//
// A Bash call with dangerouslyDisableSandbox follows Claude Code's
// sandbox.allowUnsandboxedCommands (Config.Unsandboxed): absent, it asks a
// person in every mode, bypassPermissions included, even when its command
// would be allowed (an allow was given for a run inside the sandbox; the
// ask fails closed, so no hook answers it, and print mode refuses it);
// false, the flag is ignored and the call is decided, and run, as a
// sandboxed one; true, as Claude Code: it asks except in
// bypassPermissions. CommandsMatch decides sandbox.excludedCommands
// (every command of the line must match, and no redirect may write a
// file: the shell of an excluded line opens it outside the sandbox).
//
// A deny or ask rule matching any layer of any command decides (the base
// name of a command given as a path is tried too, so /bin/rm is rm). An
// allow needs every command allowed: by a rule matching one of its layers
// with only transparent wrappers (nohup, timeout, bash -c with a known
// script, ...) outside it, or by being read-only (see IsReadOnlyCommand)
// with every path it reads inside the working directories. sudo, doas,
// eval and similar are not transparent: the rule must name them.
//
// The analysis fails closed. What it cannot see into (a parse error, a
// command name known only at run time such as $CMD, a script read from a
// file or from stdin, "source", a bash -c script built at run time) is
// never auto-allowed, and when deny or ask rules exist that could apply, the
// call asks even in bypassPermissions mode. What it understands but must not
// auto-allow (eval, alias, arithmetic evaluation, cd outside the working
// directories or to an unknown place, wrapper options it does not know,
// setting an environment variable that is not on a short list of harmless
// ones such as NODE_ENV or LANG; PATH, LD_PRELOAD, GIT_* and the like can
// change what an allowed command runs) asks.
//
// cd is tracked: later commands may run in the directory before or after
// it, and their relative paths are checked against both (a loop body that
// moves is followed through a second pass). When one of the directories a
// path may be relative to is unknown, the known ones are still checked
// against deny rules before the call asks. Output redirections are
// writes, except to /dev/null, /dev/tty, and /dev/stdout, /dev/stderr,
// /dev/fd/1 and /dev/fd/2 written exactly so while no redirection of the
// line has put a file opened for reading or another descriptor on
// standard output or error ("1<f", "1>&3": writing to /dev/fd/1 would then
// reopen that file for writing). Any other spelling (/dev/fd/../x,
// /dev/fd/3/x after "3<dir") is a path, resolved as above or unknown.
// Edit deny rules apply to their targets, and an
// allowed command that writes to a file is only allowed when an Edit allow
// rule covers the file or acceptEdits mode would allow editing it. Every
// argument that may be a path is checked against Read deny rules (and Edit
// deny rules for commands that are not read-only), globs expanded against
// the file system, so "cd secrets && cat key", "cat secr*" and
// "cat ./link-to-secrets/key" are denied by Read(./secrets/**).
//
// Unquoted glob patterns are treated as what they may become: a deny rule
// matches "git push --forc?" (a file named --force would make it so), a
// glob cannot make a command read-only when it could expand to an option or
// to extra arguments ("sort -o*", "uniq *"), and a glob in the command name
// is opaque. Brace and glob expansion are bounded so that hostile lines stay
// cheap to check.
//
// Glob, Grep and LS return many files from one call: [Checker.DeniedRead]
// (the tools' tool.ReadPolicy) lets them leave out what Read deny rules
// cover, names included, and lets every file tool refuse a covered path
// below this check. A Read deny or ask rule covers every file tool, not
// only Read, Glob, Grep and LS: Edit, MultiEdit, Write and NotebookEdit
// show what they open (a snippet, the original), and a tool outside the
// table (an MCP tool, Workflow's scriptPath) may show any path it reports
// through Pather.
//
// Git keeps every committed and staged version of every file in its
// object store and index, which neither a path rule nor the sandbox's
// hiding of working-tree paths reaches. While any Read deny rule is in
// force, a git command that can print file contents or names from there
// (show, log -p, cat-file, diff, archive, blame, grep, format-patch,
// bundle, stash show, ls-files, an alias, …) asks in every mode, failing
// closed, and one whose "rev:path" names a covered path is denied. Safe
// are the subcommands that print no contents (status, branch, commit, …;
// status and commit not with -v/--verbose, which print a diff)
// and the log family with only options that keep it to commit metadata
// (githistory.go); the list is an allow-list, so an unknown subcommand or
// option counts as revealing.
//
// Limitations, by design of a rule system rather than a sandbox: what a
// program does internally (python -c, make, a script file) is not seen;
// rules constrain what the shell runs. A relative cd in a line that
// mentions CDPATH may go anywhere; a CDPATH inherited from the environment
// is not seen, so the Bash tool should unset it. Case-insensitive file systems can defeat
// case-sensitive path patterns. Paths are checked before the call runs,
// so a file system that changes in between is not covered.
//
// # Files obeyed by approval
//
// A settings file obeyed only because a person approved its content
// (settings.Source.Approved: it lies where agents write, see
// internal/configtrust) narrows as written but cannot move the bounds the
// person's own files and flags set (approved.go): its deny and ask rules
// and disableBypassPermissionsMode apply; its allow rules skip prompts
// only for paths inside the working directories and not protected
// (Rule.ByApproval; a tool-wide rule too), and never count as a person's
// word on a path, so the file tools' own roots and protected lists hold
// below this check (tool.Env.Approved); Bash, MCP and WebFetch allow
// rules apply as written, within the sandbox; its defaultMode applies
// except bypassPermissions (with sandbox.allowUnsandboxedCommands true it
// would let commands out of the sandbox with no one asked); its
// additionalDirectories are not applied. Each entry not applied, and each
// allow rule naming an absolute or home path, is reported by
// [Checker.Problems].
//
// # Broken settings
//
// An invalid deny rule becomes a rule denying every call of its tool; an
// invalid ask rule asks for every call of its tool; an invalid allow rule
// is dropped. A rule whose tool name cannot be read (":(Skill*)") names no
// tool and is ignored, as Claude Code ignores it: denying every call over
// one typo in a list of fifty would stop the agent altogether. A settings file
// that cannot be read or parsed (or whose permission lists have the wrong
// shape) may have held deny rules, so while it is broken nothing is
// auto-allowed: every allow becomes an ask. All of these are reported by
// [Checker.Problems] naming the file, line and rule.
//
// # Subagents
//
// [Checker.ForChild] gives a subagent its mode: the parent's, unless the
// agent definition sets one; a parent in bypassPermissions or acceptEdits
// keeps its mode regardless. Rules, working directories and runtime rule
// updates are shared by the whole tree.
//
// # Prompters
//
// An ask goes to a [Prompter]: [Headless] (print mode) denies with a reason
// that tells the model how the user could allow the call; [Command] runs
// the --permission-prompt-command program with Claude Code's permission
// prompt JSON; the terminal dialog and the team lead's mailbox implement
// the same interface elsewhere. [Checker.Resolve] runs the whole sequence.
package permission
