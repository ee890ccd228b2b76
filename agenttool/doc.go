// Package agenttool is where agents are born: the Agent tool that a model
// calls to delegate, its routing to the spawn paths (synchronous subagent,
// background agent, fork, teammate, remote), and the Runtime that holds what
// every agent of a session shares (the model client, the agent catalog, the
// task registry, permissions, hooks, transcripts, limits).
//
// Design decisions the spec leaves open:
//
//   - The lead is created by the same Runtime as its children, so every agent
//     — lead, subagent, fork — is built by one code path (NewLead and spawn)
//     and differs only in its inputs: role, depth, definition, mode.
//   - The Agent tool reports itself read-only and concurrency-safe, so several
//     Agent calls in one assistant message run in parallel. Its own calls need
//     no approval; the child's tool calls are checked at every depth.
//   - Concurrency is bounded by a semaphore (Config.MaxConcurrent, default 32)
//     that queues: a spawn past the limit waits for a slot (its task shows
//     phase "queued") and is never refused.
//   - Depth is enforced twice: the pool of an agent at MaxDepth has no Agent
//     tool, and a spawn that would exceed MaxDepth is refused at run time.
//   - A synchronous child is a foreground task linked to the caller's turn:
//     cancelling the caller cancels the child, and the call returns only after
//     the child's run function (and so its tool processes) has finished. A
//     child moved to the background (task.Registry.Background, or
//     auto-background) turns the call's result into async_launched and
//     notifies later.
//   - Paths not built yet (remote agents; isolated teammates while the
//     teammate spawner cannot isolate them) answer with an is_error result
//     saying so, never with a silent fallback to another path.
//   - Worktree isolation (isolation: "worktree", Config.Worktrees): the
//     worktree is made at spawn, before the task starts, so a missing git or
//     repository, or a WorktreeCreate hook's refusal, is the Agent call's
//     is_error result and the agent never runs unisolated. Its slug comes
//     from the agent's name or description plus its id. The agent's cwd is
//     the same directory inside the worktree, its env's write guard the
//     worktree's (file tools and Bash consult it), and its environment
//     says it is isolated; when the session has a git snapshot, the agent's
//     is taken in its worktree (its branch and status, not the main
//     checkout's uncommitted files). When the task body returns — finished, failed or
//     stopped — a clean worktree goes with its branch and a changed one is
//     kept and named in the result and the notification. Children of a
//     confined agent inherit its cwd and guard. A fork keeps its parent's
//     system prompt and tools byte for byte; the note that its paths differ
//     goes into its directive. WorktreeCreate and WorktreeRemove fire
//     through the agent's engine hooks when those implement
//     isolation.Hooks (hook.Scope does).
package agenttool
