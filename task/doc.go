// Package task is Cohort's background task engine: a per-session registry
// of tasks (local agents, background shells, and room for remote agents,
// in-process teammates and dream tasks), their state machine, progress,
// transcript files, and the exactly-once notification each background task
// sends its parent when it ends.
//
// # Lifecycle
//
// The agent tool (or the shell tool) calls Registry.Start with a Spec and a
// run function. Start registers the task as running, creates its output
// file, emits task_started and runs the function in a goroutine the
// registry owns. When the function returns, the registry alone finalizes
// the task — flush and close the output file, mark it terminal, notify,
// close Done — so a task reaches exactly one terminal state, and
// transitions out of a terminal state are impossible by construction (and
// checked). Stop, Kill, Close and a linked caller's cancellation only
// cancel the task's context and record a stop request; a task with a stop
// request ends as killed whatever its function returns. A kill that loses
// the race to completion finds the task terminal and reports
// ErrNotRunning.
//
// # Foreground, background and Await
//
// A synchronous Agent call starts its child in the foreground (Spec.Linked,
// so cancelling the turn kills it) and waits in Task.Await.
// Registry.Background (or Spec.AutoBackground, measured on the injected
// Clock) moves it to the background: Await returns ErrBackgrounded, the child stops
// following the caller's context, and its result comes later as a
// notification. Under the task's lock, completion reads the background flag
// and Background refuses a terminal task, so the result arrives exactly
// once: through Await (foreground) or through the queue (background).
//
// # Notifications
//
// After marking the task terminal, the finalizer wins an atomic
// check-and-set of the notified flag and enqueues one Notification into the
// parent's Queue if the task is in the background. Failures and kills
// notify too. A foreground task counts as notified without an entry (its
// caller has the result). TaskOutput may win the check-and-set first
// (Registry.Consume): a result the model already read through TaskOutput
// is not delivered twice. Notification.XML renders the <task-notification>
// block; closing tags inside the text that could end the block early are
// rewritten to "<\/…".
//
// The Queue orders what waits for an agent's next turn boundary: user
// prompts first, then teammate messages, then task notifications, FIFO
// within each kind. Registry.Outstanding tells a print-mode lead how many
// background tasks will still notify its queue, so it keeps running until
// they have.
//
// # Eviction
//
// A terminal, notified task stays listed for a grace period (3 s; 30 s
// while Retain is set, as for a task shown in a panel) and is then removed
// from the registry's listing. Its output file remains. Timers come from
// Config.Clock, so tests run eviction under testing/synctest.
//
// # Task ids
//
// A task id is a one-letter kind prefix — a (local_agent), b (local_bash),
// r (remote_agent), t (in_process_teammate), d (dream), w (local_workflow) — followed by eight
// characters of [0-9a-z] from Config.Rand, as Claude Code does. Output
// files are created with O_EXCL, so the file system decides uniqueness: an
// id whose file exists (from an earlier process of the same session) is
// skipped.
//
// # Output files
//
// Each task's transcript goes to
// $COHORT_HOME/tmp/{sessionId}/tasks/{taskId}.output: directories 0700 (never through a planted symbolic
// link), the file created 0600 with O_EXCL|O_NOFOLLOW relative to the
// opened tasks directory, so a link planted at the path is refused with
// ErrSymlink rather than followed. Writes go through a bounded buffer
// (default 1 MiB) that a goroutine drains to disk; the goroutine exists
// only while there is data to write. When the disk falls behind, a writer
// waits up to 2 s and then drops its line; the file gets a
// "[N lines dropped …]" marker in its place. Memory is therefore bounded
// whatever the agent writes. The file is capped (default 5 GiB); at the
// cap one truncation note is written. The last 1,000 lines (each cut to
// 4 KiB) stay in memory for the UI and TaskOutput.
//
// # The session directory and its cleanup
//
// $COHORT_HOME/tmp/{sessionId}/ belongs to the processes of a session
// (the lead, and tmux teammates, which share its id): each Registry holds
// a shared lease on its .lock (package internal/lease) from NewRegistry to
// Close. When the last one closes, the directory is removed — except the
// output files whose notifications were never delivered. Every task writes
// tasks/{id}.pending when it starts, and it is removed once the
// notification is drained from the parent's queue (or withdrawn because
// TaskOutput gave the result, or the task had nobody to notify): an output
// file that a notification still has to point at (the killed notification
// a resumed session gives) stays until then. Undelivered lists the records
// an earlier process of the session left; Release removes one once its
// notification has been given another way. NewRegistry sweeps the
// directories no process holds (sessions that were killed) the same way,
// keeping pending outputs for Config.PendingRetention (30 days).
//
// An agent task whose Spec names its Transcript gets no second copy: its
// output file is a hard link to the sidechain transcript the agent's engine
// already writes (made without following links, checked through the opened
// directory, chmod 0600), as Claude Code points an agent's output file at
// its transcript. That file is written synchronously by the transcript
// writer and never capped; TaskOutput reads its last lines from disk and
// shows a running agent's messages in them as text (agentout.go). When
// the two paths cannot be linked (different file systems), the task falls
// back to a file of its own. See linked.go.
//
// # Events
//
// Config.OnEvent receives stream-json system events shaped like Claude
// Code's: task_started, task_progress and task_notification (whose status
// says "stopped" for a killed task, as Claude Code's does, while the
// model-facing XML says "killed"). Progress events are coalesced per task:
// the first change is sent at once, then at most one per ProgressInterval
// (default 1 s) with a trailing event carrying the latest counts, so a
// thousand busy agents produce at most a thousand events a second and an
// idle one none.
//
// task_updated says what changed in a task: its end (status, end_time,
// error), sent just before its task_notification, and a move to the
// background (is_backgrounded). background_tasks_changed carries every
// running background task, in the order they joined: sent when a task
// starts in or moves to the background, and after one that ends there has
// sent its task_notification. The set is kept apart from the listing
// (levelMu), so an event costs the size of the set, not of the registry.
//
// # Tools
//
// TaskOutput and TaskStop (Claude Code's names and fields; TaskStop also
// takes the deprecated shell_id) are main-agent tools: both refuse to run
// at depth > 0, besides being filtered out of subagent tool pools. An
// unknown id gives an is_error result that lists the running tasks.
package task
