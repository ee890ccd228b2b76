// Package agenttool is the Agent tool a model calls to delegate: its input
// (Claude Code's fields), its routing to the spawn paths — teammate (with
// team_name and name), remote (a job for a NATS worker, crew.SpawnRemote),
// fork, background or
// synchronous subagent — and its result (Claude Code's AgentToolResult, or
// async_launched for work that reports later). The agents themselves are
// built and run by package crew; teammates by a TeammateSpawner
// (package teammate).
//
// Design decisions the spec leaves open:
//
//   - The tool is made inside the runtime's tool factory
//     (crew.Config.Tools), which hands it the runtime; it finds its
//     caller by the id in tool.Env.Agent.
//   - An omitted subagent_type means general-purpose, or a fork when the
//     fork_subagent flag is on; "fork" with the flag off is an is_error
//     result naming the flag. An agent whose definition lists the types it
//     may start (Agent(type, …) in its tools) is refused the others.
//   - Whatever the runtime refuses (depth, mode, isolation, a bad cwd) is
//     the call's is_error result, worded for the model.
package agenttool
