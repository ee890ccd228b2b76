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
//   - Paths not built yet (teammates before teams, remote agents, worktree
//     isolation before worktrees) answer with an is_error result saying so,
//     never with a silent fallback to another path.
package agenttool
