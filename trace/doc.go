// Package trace writes a whole run — every agent, turn, model request and
// tool call — as a Chrome trace-event file (the JSON Array Format), so a
// user can open it in Perfetto (ui.perfetto.dev) or chrome://tracing and see
// a team's timeline at a glance. The CLI feeds a Writer from the same
// engine and task events its other sinks get (--trace FILE); Validate
// checks a file the way tests and users need it checked.
//
// # Layout
//
// The session is one process (pid 1, named by a process_name event). Each
// agent is one thread, named by a thread_name event: "lead" for the first
// agent without a parent call, "<subagent_type>: <description>" for an
// agent whose task_started was seen, and "agent <id>" otherwise.
// thread_sort_index puts the lead first and the other agents in the order
// their tasks (or, without a task, their first events) started.
//
// Task events carry no agent id, so an agent task is matched to its agent
// through the Agent call: the task's tool_use_id is the ParentToolUseID of
// the agent's engine events. Until the agent's first engine event the task
// is pending; its thread is made then (a remote agent, which sends none,
// gets it when its task ends, or at Close). An agent resumed under a new
// task keeps its thread: the new task's agent span opens on it again.
//
// An agent's main thread holds nested complete ("X") events: the agent
// (from its first event, or its task_started, to its task_notification), its
// turns ("turn N": a model request and the tool calls that follow it), and
// each "model request" (args: model, usage, stop_reason, first_token_ms,
// and cost_usd when Config.Prices is set; the agent span then carries the
// agent's summed usage and cost_usd).
// Retries, compactions and task_started/task_notification are instant
// events ("i", thread scope) on it.
//
// Tool calls go on lanes: threads named "<agent> · tools k" that sort right
// below their agent. A call takes the lowest free lane, so sequential calls
// share lane 1 and parallel calls spread over lanes 1..n. Lanes were chosen
// over async events (ph b/e) because Perfetto shows async slices on tracks
// of their own, grouped by name per process rather than beside the agent,
// and over putting calls on the main thread because calls that overlap
// cannot nest there. A background shell (a local_bash task) is a span on a
// lane of the agent whose Bash call started it.
//
// # Time
//
// The writer stamps each event with Config.Now when it receives it rather
// than trusting engine.Event.Time: task events carry no time, one clock
// keeps engine and task events comparable, and the order the writer sees
// an agent's events in is then the order on its timeline, so its spans nest
// by construction. Stamps are strictly increasing (a stamp that would tie
// the previous one moves 1 ns later; "ts" keeps nanoseconds as a decimal
// fraction of its microseconds), because viewers break ties between
// complete events by position in the file and a span is written when it
// ends, child before parent.
//
// # Writing
//
// Spans are written when they end, so memory holds only the open ones plus
// one buffer (Config.BufferSize), which is written whole when full, when an
// event arrives Config.FlushInterval after the last write, on Flush and on
// Close. The file therefore always ends at an event boundary: a run that
// crashes leaves "[" and whole events without the closing "]", which the
// trace viewers (and Validate) accept. Close ends what is still open at
// that moment with "unfinished": true in its args. An agent with no task
// (the lead) that is idle at Close ends at its last event and is not
// unfinished. Args are kept small: tool inputs, errors and summaries are
// clipped to 200 characters, names to 80; no message content is recorded.
//
// The file is created with mode 0600 (an existing file is truncated and
// made 0600) and is never opened through a symbolic link (ErrSymlink) or
// as anything but a regular file.
package trace
