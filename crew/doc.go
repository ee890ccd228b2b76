// Package crew builds and runs every agent of a session: the lead,
// synchronous subagents, background agents, forks, resumed agents and
// teammates. A Crew holds what they share (the model client, the agent
// catalog, the task registry, permissions, hooks, transcripts, worktrees,
// limits); an Agent is one of them — its record (tool.Caller), definition,
// queue, engine and permission state.
//
// The Agent tool a model calls to delegate is here too (NewAgentTool): its
// input (Claude Code's fields), its routing to the spawn paths — teammate
// (with team_name and name, through a TeammateSpawner: package teammate),
// remote (SpawnRemote), fork, background or synchronous subagent (Spawn) —
// and its result (Claude Code's AgentToolResult, or async_launched for
// work that reports later). The team layer (package teammate) builds
// teammates with NewAgent and runs them with Activate; SendMessage reaches
// running and finished agents through Deliver.
//
// Design decisions the spec leaves open:
//
//   - No construction cycles. The runtime makes its tools from
//     Config.Tools, a factory it calls with itself, so the tools that
//     need it (Agent, Bash's background shells, TaskOutput, SendMessage,
//     EnterWorktree) hold it from the start; nothing is bound later. The
//     lead is made by NewLead like every other agent (its id and queue
//     with it), and tools learn who calls them from tool.Env.Caller, the
//     caller's record.
//   - One record of an agent's facts (tool.Caller: id, name, team, kind,
//     type, model, cwd, worktree, permission mode, color, depth, parent).
//     The runtime keeps it under the agent's lock; a move (EnterWorktree)
//     or a mode switch (plan mode) updates the record and the engine's
//     copy together; task specs (taskSpec) and hook inputs are made from
//     it in one place each.
//   - One path runs every spawned agent (activate): the per-agent
//     deadline (Config.Deadline, per activation — a teammate's deadline
//     bounds each piece of work, not its idle life), SubagentStart and
//     SubagentStop (hook.SubagentHooks), the notifications of the agent's
//     own background tasks (so it never orphans them), and one summed
//     engine.Result. Sync, background, fork and resume tasks share one
//     task body (taskBody); teammates call Activate from their loop.
//     Teammates take no concurrency slot: they live for the session and
//     would starve the slots while idle.
//   - An omitted subagent_type means general-purpose, or a fork when the
//     fork_subagent flag is on; "fork" with the flag off is an is_error
//     result naming the flag. An agent whose definition lists the types it
//     may start (Agent(type, …) in its tools) is refused the others.
//     Whatever the crew refuses (depth, mode, isolation, a bad cwd) is the
//     call's is_error result, worded for the model.
//   - The Agent tool reports itself read-only and concurrency-safe, so
//     several Agent calls in one assistant message run in parallel. Its
//     own calls need no approval; the child's tool calls are checked at
//     every depth, with a child of the session's permission checker in
//     the child's mode.
//   - Concurrency is bounded by a semaphore (Config.MaxConcurrent, default
//     32) that queues: a spawn past the limit waits for a slot (its task
//     shows phase "queued") and is never refused.
//   - Depth is enforced twice: the pool of an agent at MaxDepth has no
//     Agent tool, and a spawn that would exceed MaxDepth is refused. Below
//     the lead only a definition that lists Agent has the tool at all
//     (package agentdef's pool).
//   - A call to a tool the agent's role lacks is answered with the reason
//     and the tools it has (engine.Config.Lacking, from the pool's
//     exclusions).
//   - A model cannot grant a child more than it has: a requested mode
//     that exceeds the parent's (permission.Mode.Exceeds) is refused.
//   - A synchronous child is a foreground task linked to the caller's
//     turn: cancelling the caller cancels the child, and Wait returns only
//     after the child's run (and so its tool processes) has finished. A
//     child moved to the background (task.Registry.Background, or
//     auto-background) turns the call's result into async_launched and
//     notifies later.
//   - Names: a name resolves to the running agent that has it, and — for a
//     resume — to the latest agent that had it, never to an older one.
//     Whether a message joins a running activation or resumes a finished
//     agent is decided under the agent's lock, the same lock the end of
//     an activation takes, so a message is never left in the queue of an
//     agent that stopped reading it.
//   - Forks: the child's request is the parent's last request byte for
//     byte (package internal/fork builds the history and breakpoints); in
//     a fan-out the first fork runs at once and its siblings wait for its
//     first streamed token, so they read the prefix it wrote to the cache.
//     The parent's tool array comes along, Agent and the team tools in it;
//     a fork may call only what a subagent would have
//     (engine.Config.Withheld refuses the rest with the tools it can use),
//     and the Agent tool refuses a fork's fork besides.
//   - Siblings: agents one assistant message starts together (subagents,
//     background agents, in-process teammates) are grouped by model and
//     tool array; the first of each group starts at once and the rest wait
//     for its first streamed event before they take a concurrency slot, so
//     one writes the shared prefix to the prompt cache and the rest read it
//     (siblings.go). The Agent tool's Prepare names the batch (Batch);
//     since the engine starts a subagent as soon as its call is complete
//     in the streamed message, a batch is open-ended (its calls arrive one
//     by one) and a gate, once open, is forgotten. Teammates in processes
//     of their own get the batch's name (BatchName) and order themselves
//     through a SiblingGate that spans processes (AgentSpec.Siblings;
//     package teammate's FileGate). The sibling_gate flag (on by
//     default; --flag sibling_gate=off) turns the ordering off, for forks
//     too: every agent then starts at once, and the benchmarks measure
//     what the gate costs.
//   - Worktree isolation (isolation: "worktree", Config.Worktrees): the
//     worktree is made at spawn, before the task starts, so a missing git
//     or repository, or a WorktreeCreate hook's refusal, is the Agent
//     call's is_error result and the agent never runs unisolated. Its slug
//     comes from the agent's name or description plus its id. The agent's
//     cwd is the same directory inside the worktree, its write guard the
//     worktree's (file tools and Bash consult it), and its environment and
//     git snapshot describe the worktree. When the task body returns —
//     finished, failed or stopped — a clean worktree goes with its branch
//     and a changed one is kept and named in the result and notification.
//     Children of a confined agent inherit its cwd and guard. A fork keeps
//     its parent's system prompt and tools byte for byte; the note that
//     its paths differ goes into its directive.
//   - Plan mode: leaving plan mode gives an agent whose pool was cut for
//     plan mode the pool of its new mode (one cache miss); entering it
//     keeps the pool, the permission gate refusing what plan mode forbids.
//     An agent with a PlanApprover (a teammate) gets ExitPlanMode past the
//     gate: the approver decides its plan.
//   - Memory: Config.AgentMemory tells each agent about its own memory
//     dir in its first message (the lead, the project's; a definition with
//     memory set, its own). An AgentSpec with System (the dream agent) has
//     that as its whole system prompt and no memory files at all.
//   - Spend caps (Config.Budget, budget.go): each agent's account is
//     below the account of the agent that spawned it (a teammate's below
//     its team's, the lead's below the session's), with its definition's
//     maxBudgetUsd and maxTokens held to the session's cap, so what an
//     agent delegates counts against its cap. An agent stopped at a cap
//     ends its activation with a result that says which cap and what it
//     spent (CapNote), which reaches its parent like any result (the
//     Agent call's, or the task notification).
//   - A remote agent's spend is capped on its worker: the job carries a
//     share of what its spawner's caps leave — half of it (the other
//     half stays for the agents here), at most its definition's
//     maxBudgetUsd — held in the ledger while the job runs and settled
//     with what the result says it spent, so remote jobs running at once
//     cannot cross a cap together. A job whose result never comes counts
//     its whole share as spent. The spend also reaches the session's
//     totals (Config.RemoteSpent). A cap with nothing left refuses the
//     spawn.
//   - Remote agents (isolation: "remote", the remote_agents flag and
//     Config.Remote): SpawnRemote submits the job at spawn — the
//     definition, prompt, resolved model and mode, the code at the
//     repository's HEAD — so an unreachable queue is the Agent call's
//     is_error result, never a silent local run. The agent is a background
//     task of kind remote_agent with no engine here: its progress comes
//     from the worker, TaskStop cancels the job on the worker, and its
//     patch is applied to a kept worktree on cohort/remote-<id> at the
//     job's base commit (worktree.Manager.CreateAt) after the
//     protected-path check, or kept aside in .cohort/remote/<id>.patch.
//     What the worker's policy capped is appended to the result. The
//     task's phase is "queued" until a worker starts the job, then
//     "running". A job waits in the queue as long as it takes (workers may
//     all be busy) unless Config.Deadline (the agent timeout) is set,
//     which bounds it from submission to result and is its wall time on
//     the worker too; TaskStop and the session's end cancel it.
//   - Two agent models share one Agent tool (agentmodel.go): the seed's by
//     default, Claude Code 2.1.332's behind the background_agents and
//     implicit_team flags, each with its own wording of the description
//     and fields. Under either a call written for the other is accepted,
//     never refused: a team_name that cannot apply (no name with it, or no
//     team to join under the seed's model) is dropped with a sentence in
//     the result; under an implicit team team_name and mode are dropped
//     silently, since the tool's description says so, and a name given by
//     a nested agent (not the lead) names a subagent, not a teammate.
package crew
