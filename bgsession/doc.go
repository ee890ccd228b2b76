// Package bgsession keeps the registry of background sessions — the ones
// `cohort --bg` starts detached from any terminal — and does what the
// command line and the library do with them: list them with their
// liveness, find one by id or name part, start one, stop or kill it, and
// remove it (with its worktree when that is safe). Attaching to a running
// session is package bgsession/attach's: its client drives the session as
// `cohort attach` does.
//
// A session's record is $COHORT_HOME/bg/{id}.json, its output
// $COHORT_HOME/bg/{id}.log, its liveness probe the session socket every
// session listens on ($COHORT_HOME/sessions/{sessionId}.sock, package
// sessionsock), and its control socket, which `cohort attach` speaks,
// $COHORT_HOME/bg/{id}.ctl (ControlPath).
//
// # Decisions the spec leaves open
//
//   - Field names follow Claude Code's `claude agents --json`: id (a short
//     id, 8 hex digits), name, sessionId, pid, cwd, startedAt (epoch
//     milliseconds), status (busy, waiting or idle while the process
//     lives) and state (working, blocked, done, stopped, failed, or dead:
//     see below). Cohort adds intent (the first prompt), costUsd, agents
//     (how many agents the session has started), updatedAt (last
//     activity, epoch ms), logPath, worktree, procStart (the process's
//     start time in clock ticks since boot, /proc/PID/stat field 22) and
//     flags (the session flags it was started with, as arguments:
//     `cohort respawn` starts it again with them, in its directory, on its
//     conversation; a record written before flags were kept has none, and
//     is respawned with the defaults).
//   - One writer at a time. The process that starts a session writes the
//     first record, then hands the record to the session (which learns it
//     may go on when its stdin, a pipe, reaches end of file); from then on
//     only the session writes it, until it has exited, when `stop` and
//     `rm` may. Every write is atomic (internal/atomicfile): a reader sees
//     the old record or the new one.
//   - Reading is tolerant: a record that cannot be read or decoded is
//     reported by path (ReadError) and skipped; the rest are listed.
//   - Liveness is never waited on. A session is alive when its pid runs,
//     that process started at the recorded procStart (a reused pid is
//     another process), and its socket accepts a connection within
//     ProbeTimeout. A record that says the session runs while it is not
//     alive is shown with state "dead" (the process was killed, or the
//     machine restarted): its transcript remains and `attach` reopens it.
//   - `agents --json` lists live sessions; --all adds the ended ones
//     (stopped, done and exited, failed, dead).
//   - Names: a session's name is --name's value, or else the first words
//     of its prompt. A query matches a session whose id, or sessionId,
//     starts with it, or whose name contains it (case-insensitive); an id
//     that matches exactly wins over partial matches. No match, and more
//     than one, are errors that list the candidates.
//   - Stopping sends SIGTERM to the session's process group (it is the
//     leader of its own session and group) and waits up to StopWait for it
//     to end, then SIGKILL; `kill` sends SIGKILL at once. Both check the
//     process's start time first, so a reused pid is never signalled.
//   - Removal refuses a live session (stop it first). A session with a
//     worktree (`--bg -w`) has it removed with its cohort/ branch when
//     nothing would be lost; commits no other branch holds need
//     --discard-unpushed (Claude Code's flag), and modified or untracked
//     files need --force-remove-worktree. The transcript stays, so the
//     conversation can still be resumed.
package bgsession
