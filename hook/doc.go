// Package hook runs user-configured hook commands at points of an agent's
// life, with Claude Code's protocol: the settings "hooks" section, the
// event JSON on the command's stdin, exit status 2 to block with stderr as
// the reason, and JSON on stdout for finer answers. Hooks fire at every
// depth: the lead, subagents, forks and teammates each get a Scope (a
// Runner bound to the agent) that carries the agent's id, type and depth
// into the input, so a guard on Write holds inside a subagent of a
// subagent too.
//
// # Configuration
//
// FromSettings reads "hooks" from every settings source (user, project,
// local, command line) and concatenates them, lowest precedence first;
// FromDefinition reads an agent definition's frontmatter hooks, which
// Runner.For adds to the settings hooks for that agent only. A broken entry
// is skipped and reported as a settings.Problem naming the file, line and
// JSON path (hooks.PreToolUse[0].hooks[1]); the rest still load. The Claude
// Code events Cohort does not fire (see Events not fired) load
// with a warning that they never run, and unknown names are reported with
// a suggestion for near misses: a hook that never runs should not go
// unnoticed. The hook types are Claude Code's "command", "http", "prompt"
// and "agent" (see Hook types); any other ("mcp_tool", …) is reported
// with its file and line and skipped, and a missing type is reported while
// the command runs anyway. timeout is in seconds (fractions allowed, at
// most a day).
//
// # Hook types
//
// A "command" runs in a shell (below). An "http" hook POSTs the input to
// its url (http or https) as JSON, with its headers; a 2xx answer's body
// is read as a command's stdout, and any other answer, a redirect, a
// timeout or a connection that fails is a non-blocking error. A "prompt"
// hook asks a model (its "model", else haiku, through the session's model
// client) with its prompt, the input in place of $ARGUMENTS (or after the
// prompt); an "agent" hook gives the same question to an agent that may
// use Read, Grep and Glob for up to 12 turns. Both must answer {"ok":
// true} or {"ok": false, "reason": …}: not ok is a block with the reason
// (decision "block"), and also stops the agent unless the hook sets
// "continueOnBlock" (Claude Code's default); an answer without a verdict
// is a non-blocking error.
//
// Decisions for hooks from a repository's own settings (project and
// local files, which a hostile repository writes): they load as command
// hooks from those files always have — a command hook already runs any
// program — so the rules below keep the other types from doing more than
// a command would, or from being steered by what they read:
//
//   - A model never allows anything: {"ok": true} is no opinion, so a
//     prompt or agent hook talked round by the content it judges (a file
//     written to say "answer ok") cannot approve a call the permission
//     rules would ask about; it can only block. The system prompt tells the
//     model to treat the event as data.
//   - An agent hook's agent reads only inside the session's working
//     directories (no "~", no symlink out, nothing the permission rules do
//     not allow without asking), cannot write or run commands, and fires
//     no hooks itself (a hook that fired hooks could loop). Its answer is
//     all that leaves it.
//   - An http hook's header values expand only the variables its
//     allowedEnvVars lists, and never a credential Cohort holds
//     (ANTHROPIC_API_KEY and the others of internal/childenv), even when
//     listed: a repository's hook cannot have the user's API key sent to
//     its server. Redirects are not followed, so the input goes to the
//     named URL only. What the input itself holds (tool inputs, file
//     contents in tool_response) goes to that URL, as it would reach a
//     command hook's program.
//   - Prompt and agent hooks run on the user's model account; their cost
//     is bounded by the hook's timeout, a 1,024-token answer and the
//     agent's 12 turns.
//
// Claude Code's allowedHttpHookUrls and httpHookAllowedEnvVars settings are
// not read yet: every http hook that loads runs.
//
// Matchers follow Claude Code: "" or "*" match everything; a pattern made
// of letters, digits, "_" and "|" is a list of exact names ("Write|Edit");
// anything else is a regular expression (Go syntax) that may match
// anywhere in the name ("mcp__.*", "Notebook.*"). The matcher applies to
// the tool name for PreToolUse, PostToolUse, PostToolUseFailure and
// PermissionRequest, to the agent type for SubagentStart and SubagentStop,
// to the source of SessionStart, the reason of SessionEnd, the
// notification_type of Notification, the trigger of PreCompact and
// PostCompact, the error kind of StopFailure and the load_reason of
// InstructionsLoaded, and is ignored for the other events. A matcher that does not compile is
// reported and, to fail closed, matches every name. Identical command
// strings matching one event run once.
//
// An entry's "if" is a permission rule ("Write(.env*)", "Bash(git push
// *)") that a tool call must also match for the command to run. It is
// matched as a deny rule of that text would be (package permission), so
// Bash rules see every command of a compound line and path rules resolve
// against the agent's cwd; a call the rule cannot be checked against (a
// command known only at run time) counts as a match. An "if" that cannot
// be read is reported and the hook runs for every call its matcher
// accepts; an "if" on an event that is not about a tool call is reported
// and ignored.
//
// # Input
//
// Common fields: session_id, transcript_path, cwd, hook_event_name,
// permission_mode, prompt_id (the latest user prompt's id: each
// UserPromptSubmit, or Runner.NewPrompt, starts one; absent before the
// first) and effort {level} (the agent's effort level, "high" — the API's
// default — when it sets none; absent when the front end does not give
// it); then Cohort's additions: agent_id, agent_type (the agent the
// event belongs to — for SubagentStart and SubagentStop the subagent, as
// in Claude Code), depth (0 for the lead, always present) and
// parent_tool_use_id (the Agent call that spawned the agent). Per event:
// tool_name, tool_input, tool_use_id for tool events; tool_response and
// duration_ms for PostToolUse; error, is_interrupt and duration_ms for
// PostToolUseFailure; tool_calls [{tool_name, tool_input, tool_use_id,
// tool_response}] for PostToolBatch (every call of one model message, once
// all have results); prompt for UserPromptSubmit and SubagentStart;
// stop_hook_active, last_assistant_message, background_tasks (the
// session's background work still running: {id, type, status,
// description, command, agent_type}) and session_crons (always empty:
// Cohort schedules no prompts) for Stop and SubagentStop, plus
// agent_transcript_path for SubagentStop; error (Claude Code's kind:
// rate_limit, overloaded, server_error, authentication_failed,
// billing_error, model_not_found, unknown), error_details and
// last_assistant_message (the error's text when the model said nothing)
// for StopFailure; source (user, or system for a deadline), reason (stop)
// for Interrupt; old_cwd, new_cwd (cwd is the new one) for CwdChanged;
// teammate_name, team_name for TeammateIdle; task_id,
// task_subject, task_description (teammate_name, team_name for a
// teammate) for TaskCreated; task_id, status, summary (plus task_subject,
// task_description, teammate_name, team_name when known) for
// TaskCompleted; worktree_path, branch for WorktreeCreate and
// WorktreeRemove; source and model for SessionStart; reason for
// SessionEnd; message, title, notification_type for Notification; trigger
// and custom_instructions for PreCompact; trigger and compact_summary for
// PostCompact; tool_name, tool_input and permission_suggestions for
// PermissionRequest; file_path, memory_type and load_reason for
// InstructionsLoaded; from_model, to_model, requested_model, source,
// context_tokens, prompt_cache_warm, cache_ttl, estimated_cache_write_usd
// and pricing for PreModelSwitch and PostModelSwitch.
//
// These follow the hook inputs Claude Code 2.1.332 sends (its Agent SDK's
// declared shapes, and internal/conformance's record of a scripted run).
//
// # Events not fired
//
// Claude Code's Agent SDK 0.3.337 lists 35 events; Cohort fires 26. The
// other 9 load with a warning and never run, because Cohort has no
// moment they describe. For each, why:
//
//   - PermissionDenied: Claude Code fires it when its auto mode's
//     classifier refuses a call; Cohort has no classifier (auto reads as
//     default), and a refusal by the permission rules or by nobody being
//     there to ask does not fire it in Claude Code either (the recorded
//     run shows PermissionRequest only).
//   - Setup: Claude Code's --init and --maintenance runs; Cohort has none.
//   - Elicitation, ElicitationResult: Cohort's MCP client does not offer
//     elicitation, so no server can ask.
//   - ConfigChange, FileChanged, DirectoryAdded: settings and skills are
//     read when a session starts (and skills again when a host asks), no
//     file is watched (watchPaths answers are ignored), and directories
//     are added only on the command line, before the session starts;
//     Claude Code fires these for a watcher's change and for /add-dir.
//   - MessageDisplay: Cohort's front ends print the model's text as it
//     arrives and have no step where a hook could rewrite it.
//   - PreSkillShellCommand: skills are instructions only; Cohort runs no
//     shell commands written inside them.
//
// Decisions for the three fired last:
//
//   - InstructionsLoaded fires for each memory file read into the lead's
//     opening (COHORT.md, CLAUDE.md and AGENTS.md in the user
//     directories, memory_type User, and from the project root down to
//     the cwd, Project), after SessionStart and before the first
//     UserPromptSubmit, with load_reason session_start, as Claude Code
//     2.1.332 fired it in the recorded run. Cohort reads no other kind
//     (no CLAUDE.local.md, no nested or glob-matched rules), so of the
//     other load reasons only compact occurs (after a compaction). The matcher is the load reason.
//   - UserPromptExpansion fires when a prompt names one of the project's
//     custom commands (package slashcmd), whichever front end sent it,
//     before UserPromptSubmit (which sees the prompt as typed), with
//     expansion_type slash_command, command_name, command_args,
//     command_source projectSettings and prompt "/name args", as Claude
//     Code 2.1.332 sent them in -p (recorded run "expand"). Block refuses
//     the prompt; additionalContext (or plain stdout) joins it. Claude
//     Code's other kind, mcp_prompt, has no trigger: Cohort expands no
//     MCP prompt. A command typed into a running turn fires it too, when
//     typed (Expansion.Typed: the running prompt's prompt_id, no
//     UserPromptSubmit after it), whichever front end typed it.
//   - SessionStart with source compact fires for the lead after PostCompact,
//     when its conversation was compacted; the compacted conversation
//     opens with the lead's memory again (the summary replaced the first
//     message that held it), then the summary, then what the hooks add;
//     InstructionsLoaded fires again with load reason compact. Claude
//     Code's recorded run "compact" does the same.
//   - PreModelSwitch and PostModelSwitch fire around a switch of the
//     lead's model through the API (Session.SetModel: an SDK host's
//     set_model, source "sdk", as recorded; Session.SetModelFrom: the
//     terminal UI's /model name, "command", and its /model picker,
//     "picker" — Claude Code's enum). context_tokens is the
//     last response's input, cache and output tokens; prompt_cache_warm
//     says a response came less than cache_ttl (5m, the API's default
//     lifetime, which Cohort's requests use) ago or a turn is under way;
//     estimated_cache_write_usd prices context_tokens at to_model's
//     cache-write rate, with pricing "catalog" for the built-in list
//     prices, "configured" for the settings' "prices", and "default"
//     (Sonnet's price) for a model neither lists. requested_model is
//     what the caller asked for. PreModelSwitch refuses the switch on
//     exit 2, decision "block", or permissionDecision "deny" — and "ask",
//     since no one is asked during a switch (Claude Code's headless
//     rule); SetModel then returns the reason and the model stays. The
//     matcher is ignored for both.
//
// tool_response is the tool's structured result in Claude Code's shape
// (tool.Result.Response: Write {type, filePath, content, structuredPatch,
// originalFile}, Edit {filePath, oldString, newString, originalFile,
// structuredPatch, userModified, replaceAll}, Bash {stdout, stderr,
// interrupted, isImage}, Read {type, file}, Grep, Glob, WebFetch,
// WebSearch, TodoWrite, MultiEdit likewise), so scripts that read
// tool_response.filePath work unchanged. A tool without such a shape (the
// Agent tool, MCP tools) gives its result's text as a JSON string. Bash
// runs with stderr merged into stdout, in the order the model reads them,
// so stdout holds both and stderr is empty.
//
// # The sandbox
//
// Decision (issue 36): a command hook runs inside the session's sandbox,
// confined as the agent's approved Bash commands are (package sandbox,
// the writing profile of the agent's cwd; Config.Sandbox). It reads what
// those commands read: what Read deny rules cover and Cohort's secret
// parts of COHORT_HOME stay hidden, and no other process's /proc entry
// is open to it. It writes the agent's working directory (an isolated
// agent's worktree, not the main checkout then), the session's other
// working directories, the private TMPDIR (exported as TMPDIR), the
// cache directory and sandbox.allowWrite; the network is as the
// sandbox's policy says; no credential of Cohort's is in its environment
// unless the settings' "env" puts it there. The permission mode does not
// change this: a hook is the user's, not a call the model made.
//
// Why: a hook's program reads files the model may have written. `make
// -C "$CLAUDE_PROJECT_DIR" fmt` runs the Makefile, `python3 -m tools.fmt`
// the module, an npm script package.json, a linter its plugins, a
// formatter its project config. Protecting the script a hook names
// (Set.Scripts, which the sandbox keeps read-only) cannot cover what that
// program goes on to read, and no list of programs could: so the hook
// runs where a wrong guess costs nothing more than the model's own Bash
// could do. This holds whatever the classification says: a hook whose
// script lies in a protected folder runs confined too, and the
// invariant does not depend on Set.Scripts being right. When the session
// has no sandbox (sandbox.enabled false, --sandbox off, a machine
// without one) hooks run as Cohort's children, as Bash commands then do,
// and the start-up message says so.
//
// What it costs: a hook that writes outside those trees (a log in the
// home directory, a notification through a Unix socket) is refused. Such
// a hook may opt out with "sandbox": false on its entry; it then runs
// with the user's rights, as before, and Cohort says so once at the start
// of each session, naming the settings file, line and hook. The key is
// honoured only in files the model cannot write: user settings (the home
// directory is read-only for commands) and the project's and local
// settings (.cohort/ and .claude/ are protected paths: read-only for
// commands, and the file tools write them only with a person's
// approval). In a --settings document (any file, one the model wrote
// included) or an agent definition's frontmatter it is reported and the
// hook runs confined; so it is in a settings file that lies where
// agents' commands write (a project subfolder's, obeyed only as a person
// approved its content with `cohort config trust`, internal/configtrust):
// the approval covers the file's bytes, not the script its hook runs,
// which lies where agents write too and which only the sessions that
// load the file protect. On an http, prompt or agent hook, which starts
// no process, it is reported and ignored. When the sandbox refuses a write
// the hook attempted (whatever its exit status: `cp … || true` hides a
// refusal), the user is told which hook, which path and what would allow
// it: sandbox.allowWrite, or "sandbox": false on the hook. A hook the
// sandbox cannot start (its policy fails to set up) is a non-blocking
// error and never runs unconfined instead.
//
// Decision (issue 36): the literal output files a hook's command names are
// writable for that hook. Logging hooks are common (`jq … >>
// ~/.claude/bash-command-log.txt` on every Bash call), and without this
// one fails: the sandbox refuses the write, sh exits 2 on a failed
// redirection, and exit 2 from a PreToolUse hook denies the call, so a
// user who copied their Claude Code settings would lose Bash. The command
// text comes from a settings file the model cannot write, so a file it
// names is the user's own choice, not the model's. Command.OutputTargets
// reads it with package shellcmd (the analysis the permission layer
// uses): the target of an output redirection (>, >>, &>, >|, numbered
// forms) and tee's file arguments, with "~", $HOME, ${HOME} and
// $CLAUDE_PROJECT_DIR expanded; a target that depends on anything else
// (a command substitution such as `> "$(jq -r .tool_input.file_path)"`,
// another variable, a glob, a relative name after a cd whose directory
// is unknown, or a line that sets one of those variables itself) is not
// literal and gets nothing, because its value could come from the
// model's input. The sandbox (Sandbox.Grant, package sandbox) grants
// exactly the file, never its directory: a Landlock rule on the file
// itself with write and truncate rights only, so a program the hook runs
// (a Makefile the model rewrote) can append to the log and nothing
// beside it: no sibling, no rename, no link. A missing file is created
// empty (O_CREAT|O_APPEND, mode 0600) when its directory exists; no
// directory is made. A link is resolved and granted only when it ends at
// a regular file that is itself no protected place. Never granted, by the
// sandbox's own computation of what it protects: the read-only binds of
// the writing policy (git dirs, the project's settings directories,
// .mcp.json, hook scripts' directories), anything in a git dir, what the
// sandbox hides (Read deny rules, COHORT_HOME's secret parts), in the
// user's and the working directories' settings directories and
// COHORT_HOME any settings, memory or credentials file (*.json, *.md,
// settings*, dot files) and anything in their sub-folders (agents,
// commands, skills, hooks), dot files at the top of the home (shell rc
// files, tool configs) and the configuration folders there (.ssh,
// .gnupg, .config, .local, .aws, .kube, .docker). Such a target is told
// once at the start (Set.OutputNotices), naming the settings file, the
// hook and the path, and the hook runs without it (its write is refused
// and reported as any other). An output file outside those places that
// the user wants shared with other hooks or commands still belongs in
// sandbox.allowWrite.
//
// Decision (issue 36): the settings' statusLine (the terminal UI's
// {"type": "command", "command": …}, run at the start and after each
// turn) is a program Cohort runs on files the model may have written, as
// a hook is, and follows the same rule (internal/assemble's
// RunStatusLine): it runs in the session's sandbox, in the writing
// profile of the session's directory, with the hooks' environment and the
// sandbox's TMPDIR, stopped after 5 s; a sandbox that cannot start means
// it does not run, never that it runs unconfined. "sandbox": false on the
// statusLine entry is honoured in user, project and local settings only,
// told once at the start as for hooks; in a --settings document or an
// approved subfolder's settings it is reported and the statusLine runs
// confined. The terminal UI itself imports no sandbox: the command line
// hands it the session's runner. Its script (ScriptsOf, the analysis of
// Scripts for one command line) is a protected path as hook scripts are,
// and so are the scripts of the stdio MCP servers that run outside the
// sandbox (package mcp, "The sandbox"): the model cannot rewrite what
// runs with the user's rights, and what runs confined gains nothing if
// it does.
//
// Decision (issue 36, session 13, replacing session 12's invariant that
// protected what a program loads and scanned its tree for code reaching
// outward, which attack13 broke four ways): a program the user lets run
// outside the sandbox (an opted-out hook, stdio MCP server or statusLine,
// and the --permission-prompt-command program) runs unconfined only when
// nothing it is started with lies in a tree agents write, protected
// folders there included, and its shape is on an allow-list of shapes
// that load no code from their working directory (Judge, judge.go, states
// the rule; shapes.go the list). It no longer depends on what a script's
// code computes: a script in the project runs confined however it reaches
// its siblings, a program Cohort does not know runs confined when it runs
// in a writable tree, and the PATH and search-path variables the program
// will get are read, inherited ones included. A refused program runs in
// the sandbox and the user is told which entry, why and what to change; a
// refused prompt command is not run and every prompt is denied. What a
// program outside the writable trees computes at run time is the user's
// own code and opt-out, and each unconfined entry's notice says so. The
// working directory and environment stay as configured: Claude Code users
// run hooks in the project, so Cohort does not move them elsewhere or set
// PYTHONSAFEPATH behind their back; the notice asks for -P.
//
// The protocol is the same inside: the input on stdin, exit status 2,
// JSON on stdout, the timeout and the process-group stop (the launcher
// hands back a pidfd the group is signalled through). The http, prompt
// and agent hooks are not processes and are unaffected.
//
// # Answers and failing closed
//
// All matching commands of an event run in parallel, each with sh -c in the
// agent's cwd and COHORT_PROJECT_DIR and CLAUDE_PROJECT_DIR set (confined,
// see The sandbox), each in
// its own process group that is stopped (close stdin, SIGTERM, SIGKILL) and
// reaped on timeout (default 60 s) or cancellation. Each answer is read as
// follows, then combined: any block wins, the strongest permission
// decision wins (deny > ask > allow), texts are joined in configuration
// order.
//
//   - Exit 2 blocks, with stderr as the reason: PreToolUse denies the call,
//     UserPromptSubmit refuses the prompt, Stop and SubagentStop continue
//     the agent, TeammateIdle, TaskCompleted and WorktreeCreate refuse,
//     PreCompact skips an automatic compaction (a manual one goes ahead),
//     PermissionRequest denies the call, TaskCreated takes the new task
//     back, PreModelSwitch cancels the switch; for PostToolUse,
//     PostToolUseFailure and PostToolBatch the stderr goes to the model
//     (the tools already ran); SubagentStart,
//     WorktreeRemove, SessionStart, SessionEnd, Notification, StopFailure,
//     Interrupt, PostCompact, InstructionsLoaded and PostModelSwitch
//     cannot block and report it to the user.
//   - Exit 0 with JSON on stdout: continue/stopReason, systemMessage,
//     decision/reason and hookSpecificOutput (permissionDecision,
//     permissionDecisionReason, updatedInput, additionalContext, and for
//     PermissionRequest decision {behavior, updatedInput, message,
//     interrupt}), with Claude Code's meanings. Plain text on stdout is
//     context for UserPromptSubmit and SessionStart and ignored otherwise.
//   - A PermissionRequest hook answers a permission prompt for the user
//     (Prompter wraps the approver): allow or deny decide, and with no
//     answer the prompt goes ahead. A failed hook, or two that rewrite the
//     input differently, never leave an allow behind.
//   - Any other exit status, a crash, a timeout or a command that cannot
//     start is a non-blocking error: reported to the user (Outcome.Messages
//     and the Observer) with the file and line the hook is configured at
//     and what to do, and execution continues — as in Claude Code.
//
// Decisions the protocol leaves open, made here to fail closed for
// PreToolUse, where a lost deny would let a call through:
//
//   - A failed hook never turns into an allow: when any matching hook
//     failed, another hook's allow is dropped and the permission gate
//     decides as if no hook had spoken.
//   - Output that starts like JSON but cannot be read (syntax error, a
//     field of the wrong type, cut at the 8 MiB limit), or text with a line
//     that starts like JSON (a log line printed before the answer), denies
//     the call, as
//     does a decision or permissionDecision value that is not understood
//     ("defer" is read as "ask") and an updatedInput that is not an
//     object. For other events these are non-blocking errors.
//   - A hookSpecificOutput labelled with another event is ignored, except
//     that its deny is honoured.
//   - "continue": false denies the call: the engine has no way to stop the
//     agent from a PreToolUse hook, and the call must not run.
//   - When several hooks return updatedInput, identical rewrites apply and
//     differing ones deny the call (no rewrite silently wins).
//   - If the agent is cancelled while its PreToolUse hooks run, the call is
//     denied; the command group is killed either way.
//
// An agent definition's Stop hooks fire on SubagentStop when the agent runs
// as a subagent (depth > 0), as Claude Code converts them.
package hook
