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
// Code events Cohort does not fire (PostCompact, Setup, …) and unknown
// names are reported, the latter with a suggestion for near misses: a hook
// that never runs should not go unnoticed. Only "type": "command" hooks
// run; other types ("prompt", "agent", "http") are skipped with a warning,
// and a missing type is reported while the command runs anyway. timeout is
// in seconds (fractions allowed, at most a day).
//
// Matchers follow Claude Code: "" or "*" match everything; a pattern made
// of letters, digits, "_" and "|" is a list of exact names ("Write|Edit");
// anything else is a regular expression (Go syntax) that may match
// anywhere in the name ("mcp__.*", "Notebook.*"). The matcher applies to
// the tool name for PreToolUse, PostToolUse, PostToolUseFailure and
// PermissionRequest, to the agent type for SubagentStart and SubagentStop,
// to the source of SessionStart, the reason of SessionEnd, the
// notification_type of Notification and the trigger of PreCompact, and is
// ignored for the other events. A matcher that does not compile is
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
// permission_mode and prompt_id (the latest user prompt's id: each
// UserPromptSubmit, or Runner.NewPrompt, starts one; absent before the
// first); then Cohort's additions: agent_id, agent_type (the agent the
// event belongs to — for SubagentStart and SubagentStop the subagent, as
// in Claude Code), depth (0 for the lead, always present) and
// parent_tool_use_id (the Agent call that spawned the agent). Per event:
// tool_name, tool_input, tool_use_id for tool events; tool_response and
// duration_ms for PostToolUse; error and duration_ms for
// PostToolUseFailure; prompt for UserPromptSubmit and SubagentStart;
// stop_hook_active for Stop and SubagentStop; teammate_name, team_name for
// TeammateIdle; task_id, status, summary (plus task_subject,
// task_description, teammate_name, team_name when known) for
// TaskCompleted; worktree_path, branch for WorktreeCreate and
// WorktreeRemove; source and model for SessionStart; reason for
// SessionEnd; message, title, notification_type for Notification; trigger
// and custom_instructions for PreCompact; tool_name, tool_input and
// permission_suggestions for PermissionRequest.
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
// # Answers and failing closed
//
// All matching commands of an event run in parallel, each with sh -c in the
// agent's cwd and COHORT_PROJECT_DIR and CLAUDE_PROJECT_DIR set, each in
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
//     PermissionRequest denies the call; for PostToolUse the stderr goes
//     to the model (the tool already ran); SubagentStart, WorktreeRemove,
//     SessionStart, SessionEnd and Notification cannot block and report it
//     to the user.
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
