// Package budget holds a session's spend caps and what every agent has
// spent against them: the session's cap (--max-budget-usd, or the
// settings' maxBudgetUsd), each team's (the settings' teamMaxBudgetUsd)
// and each agent's own (its definition's maxBudgetUsd and maxTokens).
//
// Accounts form a tree that follows who started whom: the session's at
// the root, a team's below it, an agent's below its team (a teammate) or
// below the agent that spawned it (a subagent, a background agent, a fork,
// a remote agent). What an agent spends is charged to its account and
// every account above it, so a cap covers the work delegated below it: an
// agent cannot escape its cap by spawning agents of its own.
//
// Before every model request the engine reserves the request's estimated
// spend (Account.Reserve). The reservation is refused, and nothing is
// sent, when any account of the chain would cross a cap: what it has
// spent, plus what other requests under way hold, plus the estimate. When
// the response arrives the hold is settled with what the response cost
// (Hold.Settle). Holding before sending is what keeps agents that run at
// once from crossing a cap together: the second of two requests that
// would each fit is refused while the first is under way.
//
// Design decisions:
//
//   - One ledger file per session, shared by every process of it. A
//     teammate in a tmux pane is another process; its spend counts against
//     the session's and its team's caps through the same file, not through
//     the status reports its lead reads every heartbeat: those arrive late
//     (a teammate that never stops could spend a heartbeat's worth past
//     the cap) and the lead cannot stop a pane's request in time. The file
//     is $COHORT_HOME/spend/{sessionId}.json; every read-modify-write
//     takes a kernel lock (flock) on a sidecar .lock file, so the
//     processes of a session take turns, and a process that dies with the
//     lock releases it. The file holds the shared accounts (the session,
//     each team) — their caps, what they spent and the holds under way —
//     never an agent's own account, which lives in the process that runs
//     the agent.
//   - The caps of the shared accounts are written into the file by the
//     session's lead when it opens, so a teammate process applies the
//     same caps as its lead without being told them; a teammate never
//     writes caps.
//   - What is spent persists: a session continued or resumed (--continue,
//     --resume) finds its spend in the file, so a cap holds across runs
//     (the cap itself is the new run's: a continued session may be given
//     a higher one). A fork of a session (--fork-session) starts with the
//     spend of the session it forks, since its history was paid for.
//   - A hold names the process that made it (pid and a per-process id);
//     the holds of a process that is gone are dropped at the next
//     read-modify-write, so a crash never leaves a cap blocked.
//   - The file is rewritten in place, without fsync, and never replaced:
//     a request's bookkeeping costs microseconds (replacing a file by
//     rename makes ext4 flush it, milliseconds a request). A process
//     killed mid-write cannot damage it (see store.write); a machine
//     crash may lose the last few charges or, rarely, leave it damaged,
//     which the next session reports, naming the file.
//   - A cap is reached when a request's estimate would take it past its
//     limit; a request that costs nothing (a local model with a dollar
//     cap) is never refused by a dollar cap.
//   - Spend that Cohort only learns of afterwards (a remote job's result)
//     is charged with Account.Charge, with no hold before it.
package budget
