// Package engine runs one agent: the query loop that sends a request, streams
// the response, executes the tool calls it asks for, feeds the results back
// and repeats until the model ends its turn, a limit is hit or the context is
// cancelled.
//
// An Agent owns its conversation. Send appends user content and runs the loop;
// calling Send again continues the same conversation (print mode uses this
// when a background task's notification wakes the lead).
//
// Design decisions the spec leaves open:
//
//   - Events go to a Sink (a func safe for concurrent use) rather than being
//     returned as a pull iterator, because nested agents (subagents, forks,
//     teammates) report through the same sink from their own goroutines.
//     Stream adapts an agent run to an iter.Seq2 for callers that want one.
//   - Tool calls are grouped in order: a run of consecutive calls that are
//     both read-only and concurrency-safe executes in parallel (bounded by
//     Config.MaxParallelTools); any other call runs alone. Results keep the
//     order of the calls.
//   - Calls start while the message streams (calls.go). The provider hands
//     over each block complete at its content_block_stop; a call of the
//     leading group — read-only and concurrency-safe, and so is every call
//     before it in the message — starts then, through its hooks and
//     permission check like any call, unless its traits say it needs the
//     whole message (tool.Traits.WholeMessage: a fork, a teammate). So a
//     lead writing several Agent calls has the first agent working while
//     it writes the next. Every other call starts once the message has
//     ended, in its group, as if nothing had started early: a call after a
//     non-parallel one never starts before that one has finished. Which
//     calls run in parallel is unchanged; only when the leading group's
//     calls start moves. Events of a call started early (EventToolStart,
//     its agent's events) come before the EventAssistant of its message.
//   - A failed response and its retry (cut.go). Before any call has started,
//     a failure is the provider's to retry as a whole request (429, 529,
//     a dropped connection, an error event: the partial response is
//     dropped and nothing has run). Once a call has started, the response
//     is not retried: the engine stops the provider's retry, the blocks
//     received complete become the assistant message (it ends where the
//     last complete block ends; a partial block is dropped), the calls
//     that started run to their results, the other complete calls are
//     answered "not run", and a note after the results tells the model its
//     response was cut off. The next request continues from there, so no
//     call runs twice and no started agent gets a second copy. A failure
//     the provider would not retry, or cancellation, ends the Send with
//     its error after the same message and results are recorded, so the
//     conversation stays valid to send. The kept message carries the
//     usage of the response's start and no stop reason. Hooks and
//     permission prompts run once per call that runs, and never for a
//     call answered "not run". Everything is recorded in order (the kept
//     message, then the results and the note), so a resume rebuilds the
//     same bytes. A crash while the message still streams loses the
//     record of a call started early, as a crash during any call loses
//     its result.
//   - Injected content (teammate messages, task notifications) is drained
//     from Config.Inbox at every tool-result boundary and appended after the
//     tool_result blocks of that user message, so a message that arrives
//     mid-turn reaches the model at the next boundary rather than after the
//     whole turn.
//   - Requests are rebuilt from the history every turn with fresh cache
//     markers: one on the last tool, one on the last system block, one on the
//     last block of the last message (at most three; forks add a fourth), so
//     stale markers can never accumulate.
//   - A tool's Go error is shown to the model as an is_error result, like a
//     tool failure; only cancellation of the agent's context ends the loop.
//   - Before every request its size is estimated (estimate.go); over the
//     compaction threshold the older turns are summarised (compact.go), and
//     when the recent turns kept verbatim are still too large, the longest
//     tool results and user texts are cut to one common length with a note
//     (fit.go) rather than sending a request the API would refuse. Each
//     rewrite is recorded after a compaction boundary so resumes send the
//     same bytes. Hooks that also implement CompactHooks run first
//     (PreCompact) and may skip an automatic compaction; the cut still
//     happens, so the request stays sendable.
//   - Spend caps (budget.go): before every request (a turn or a
//     compaction's summary) its estimated spend is reserved against
//     Config.Budget, the agent's account in package budget; a request
//     that would take the agent, an agent above it, its team or the
//     session past a cap is not sent, and the Send ends with StopBudget
//     and Result.Capped naming the cap. The response's actual spend
//     settles the reservation.
//   - Call.Duration is the tool's own run time (hooks and the permission
//     gate excluded), set before PostToolUse, which reports it.
package engine
