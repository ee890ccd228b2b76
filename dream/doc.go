// Package dream is DreamTask: background consolidation of a project's
// memory (package memory) by a restricted agent, started after a lead turn
// when a chain of cheap gates passes, or on demand (cohort dream).
//
// # The gate chain
//
// Scheduler.Try runs the gates cheapest first and stops at the first that
// fails, returning a *Blocked that names it:
//
//  1. enabled: the auto_dream flag;
//  2. time: at least auto_dream_min_hours (24) since the last
//     consolidation, the mtime of .consolidate-lock in the memory dir
//     (never consolidated passes);
//  3. throttle: at most one session scan per 10 minutes per Scheduler;
//  4. sessions: at least auto_dream_min_sessions (5) transcripts in the
//     project dir touched since the last consolidation, the asking session
//     not counted;
//  5. lock: .consolidate-lock holds the PID of a process consolidating now;
//     it is taken when empty, when that PID is dead (signal 0), or when it
//     is older than an hour. Reading and writing it is one step under a
//     kernel lock on a sidecar (.consolidate-lock.guard), so of processes
//     racing for it exactly one wins.
//
// Taking the lock sets its mtime to now, so while a dream runs the time
// gate of every other session already says no. Lock.Commit (the dream
// finished) clears the PID and sets the mtime to the end; Lock.Rollback
// (it failed, was stopped, or the session closed under it) clears the PID
// and puts the mtime back, removing a lock that did not exist before, so
// the next check may try again. A holder whose lock was taken over as
// stale leaves the new holder's lock alone.
//
// Force (cohort dream) skips every gate but the lock.
//
// # The dream task
//
// Start runs the consolidation as a task of type dream (phase starting,
// then updating from its first write; Detail: sessions reviewing, files
// touched, turns). Nobody is notified of it and no queue waits for it, so
// it is never outstanding: a lead's Run does not wait for it, and a
// print-mode session never starts one (it would exit under it). It is
// stopped like any task (TaskStop, Session.StopAgent, Close); its run then
// rolls the lock back. A completed dream's notification event says
// "Improved N memories" and its result names the files.
//
// The agent: its whole system prompt is System (the four phases: orient,
// gather recent signal without reading transcripts whole, consolidate,
// prune and index), its first message names the sessions to review; its
// tools are Read, Grep, Glob, Write, Edit and Bash, in the session's
// permission state (deny rules hold) in default mode, with its own
// prompter — reads are approved anywhere, everything else that would ask
// is refused with a reason the model reads — and a write guard that holds
// whatever the mode: Write and Edit only inside the memory dir, Bash only
// lines permission.IsReadOnlyCommand accepts (rm is refused before it
// runs). Its turns are not recorded as a session (no transcript), so a
// dream never counts towards the next one. The files it touched are the
// memory files whose bytes differ from before it ran.
//
// Auto (Session with Config.AutoDream) runs the chain after each lead turn
// in a goroutine it owns, at most one at a time: Poke never blocks, so a
// dream never delays the lead, and Close waits for a check under way.
//
// Not done: the Bash sandbox gives the dream's commands the session's
// writable roots; the guard, not the kernel, keeps them read-only.
package dream
