// Package workflow runs workflow scripts: small JavaScript programs whose
// control flow is deterministic and whose steps are subagents. It follows
// the script API of Claude Code's Workflow tool (agent, pipeline, parallel,
// phase, log, args, budget, workflow) and adds a journal that lets a run
// resume after any crash.
//
// Design decisions the issue left open:
//
//   - Loading. A script is plain JavaScript that begins with
//     `export const meta = {...}`. Load blanks the `export` keyword (keeping
//     columns), wraps the body as `(async function(args, workflow) {...})`
//     on the script's own first line, so top-level await and `return` work
//     and every error names the author's line. meta is read from goja's AST
//     before anything runs; only strings, numbers, booleans, null, arrays,
//     plain `key: value` objects and templates without interpolation pass.
//
//   - One goroutine runs the VM. agent() returns a promise at once; the step
//     runs on its own goroutine (at most Config.Concurrency at a time) and
//     hands a closure back through a channel, which the loop in Run executes
//     on the VM goroutine. A script whose promise is pending with no step in
//     flight "never settles" and fails at once rather than waiting for the
//     timeout. Each stretch of JavaScript between awaits is bounded by
//     Config.CPUSlice through goja's Interrupt; the whole run by
//     Config.Timeout.
//
//   - Determinism. Date.now(), Math.random(), Date() and argless new Date()
//     throw; goja itself has no filesystem, network or process API and none
//     is added. Date with arguments, Date.UTC and Date.parse still work.
//
//   - pipeline and parallel are JavaScript on top of agent() (see prelude.go),
//     so their semantics are the language's: pipeline has no barrier, a
//     throwing stage makes that item null; parallel never rejects.
//
//   - Limits throw synchronously from the call that crosses them: the
//     1,001st agent() (Config.MaxAgents), more than Config.MaxItems items
//     in one parallel/pipeline call, and agent() once budget.spent() has
//     reached Config.Budget. A failed agent is null, not an exception.
//
//   - Models. An agent() without a model runs on its phase's model from
//     meta.phases, if that names one; otherwise the spawner decides (the
//     agent type's model, else the caller's).
//
//   - Schemas. agent(prompt, {schema}) asks for a JSON answer matching the
//     schema, validates it with the tool package's validator, asks once more
//     with the error, and gives null if the second answer misses too.
//
//   - The journal (journal.jsonl in Config.Dir) gets a "start" line before a
//     step spawns and an "end" or "fail" line after, one write per line. A
//     step is keyed by the hash of its inputs (prompt and options) and how
//     many identical calls came before it, not by call order, because
//     concurrent calls interleave differently from run to run. On resume a
//     finished step is replayed; an unfinished or failed one runs live; and
//     from the first call the journal has never seen (an edited or new
//     call) every later call runs live, so a changed answer cannot be
//     mixed with stale ones. "end" lines carry a checksum; a line that does
//     not parse or check is ErrCorruptJournal naming the line, never a
//     replayed value. A torn last line (a crash mid-write) only makes its
//     step run again.
//
//   - workflow(name, args) runs a saved script in the same VM with the same
//     limits, budget and journal; inside it `workflow` throws, which is the
//     one level of nesting.
//
//   - Out of process. This package runs in cmd/cohort-workflow, never in
//     cmd/cohort: linking goja there makes the binary link
//     reflect.Value.Method, which turns off the linker's method dead-code
//     elimination (the binary doubled once; internal/arch guards it).
//     Engine is this package as the host process serves it; package
//     workflow/host is the protocol and Cohort's end, where each agent()
//     becomes a request that Cohort answers by spawning a real background
//     agent. The types that cross the line are defined there and aliased
//     here. Phase costs (Result.Phases) are listed in the order the phases'
//     first agent() calls were made, so they do not depend on timing.
package workflow
