// Package tasklist is a team's shared task list: one JSON file per task in
// the team's tasks/ directory, safe for any number of goroutines and
// processes, and the four tools teammates call on it (TaskCreate, TaskGet,
// TaskUpdate, TaskList). Package team says where a team's list lives
// (Store.Tasks) and gives the tools the team's members (Store.TaskLists).
//
// # Layout
//
//	tasks/
//	    {id}.json       one file per task (Claude Code's fields, camelCase)
//	    .lock           flock(2) sidecar serialising every mutation
//	    .highwatermark  the highest task id ever allocated
//	    .generation     a counter bumped by every mutation
//
// On JetStream (OpenKV; package team uses it for a team whose file names a
// NATS server) the list is one entry of a key-value bucket:
//
//	{"highWaterMark": 3, "tasks": {"1": {task}, "3": {task}}}
//
// # Decisions the spec leaves open
//
//   - On JetStream the whole list is one entry, so every mutation is one
//     compare-and-set of its revision (package internal/kvcas): atomic like
//     the file lock, so two machines can never both claim a task, and an
//     edge is never half written. A lost compare-and-set is retried from a
//     fresh read. The cost is that every mutation rewrites the list, and a
//     list is bounded by the server's max_payload (1 MiB by default).
//     Generation is the entry's revision. An entry that is not a task list
//     is an error naming bucket, key and revision, and no mutation
//     overwrites it; a task inside it that does not parse is reported like
//     a corrupt task file and written back untouched.
//   - Release gives a member's unfinished tasks back (pending, no owner) in
//     one step: the team layer calls it for a member that shut down or was
//     declared dead, so its claims do not wait forever.
//   - Ids are increasing integers written as strings ("1", "2", …), Claude
//     Code's scheme: the next id is one more than the larger of the high-water
//     mark and the largest existing id, so ids of deleted tasks are never
//     reused.
//   - blocks and blockedBy are kept symmetric: "A blocks B" is recorded on
//     both tasks in one locked operation. Self-dependencies and edges that
//     would close a cycle are refused.
//   - Dependencies keep their history: completing a task does not remove it
//     from its dependents' blockedBy. A task is blocked while any task in its
//     blockedBy is not completed (Task.OpenBlockers); reopening a blocker
//     blocks its dependents again. Deleting a task removes it from every list.
//   - Moving a task to in_progress (by Update or Claim) is refused while it is
//     blocked; the check happens at that transition only.
//   - Claim gives a task to one owner: it succeeds if the task is unowned or
//     already the caller's, and sets in_progress. Under contention, from
//     goroutines or processes, exactly one claimant wins.
//   - Reads (Get, List) take the list lock shared, so they see a consistent
//     set of files even while a dependency edge is being written to two.
//     A corrupt task file does not hide the others: List returns the good
//     tasks together with an error naming each bad file.
//   - Generation returns a counter that every mutation increments; the team layer
//     can poll it (or watch the tasks directory) to learn of changes.
//   - The tools find the team and the caller in the caller's record
//     (tool.Env.Caller: Team, Name). TaskUpdate with status in_progress
//     and no owner is a Claim by the caller, so two teammates cannot both start a task; an
//     explicit owner must be an active member of the team (a typo would
//     otherwise leave the task waiting for nobody). Status "deleted" (as in
//     Claude Code) deletes the task, and taskId may be written "#3". Input
//     fields match Claude Code's. Failures the model can act on (unknown
//     id, cycle, blocked, claimed, a corrupt task file, a team gone) are
//     is_error results; lock timeouts, I/O errors and cancellation are Go
//     errors.
package tasklist
