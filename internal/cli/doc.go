// Package cli is the cohort command line: flag parsing, wiring a session
// together (settings, flags, model, tools, permissions, agents, tasks,
// transcripts) and print mode's output formats.
//
// Design decisions the spec leaves open:
//
//   - Run takes its environment as an Invocation (args, streams, getenv), so
//     tests run the CLI in-process, in parallel, without touching the real
//     environment; cmd/cohort passes the process's.
//   - Print mode keeps the lead alive while background tasks run: after the
//     lead ends a turn, the CLI waits on the lead's queue and starts a new
//     turn for each batch of notifications; it exits when the lead is idle and
//     nothing is outstanding. SIGINT cancels everything, stops the tasks, and
//     still prints a result.
//   - An idle lead's wake-up is coalesced: once a notification arrives, the
//     CLI waits until nothing new has come for 25 ms (at most 200 ms in all,
//     and not at all when nothing else is outstanding) so that agents
//     finishing together make one turn. Every wake-up is a model turn that
//     re-sends the lead's whole history; with a fast model, a thousand agents
//     finishing in a trickle cost hundreds of turns where a handful do.
//     COHORT_NOTIFY_COALESCE sets the quiet window (a duration; "0" turns it
//     off); the cap is eight windows.
//   - --model scripted:FILE starts the fake Messages API (llm/fakeapi) on a
//     loopback port inside the process and points the real Anthropic client at
//     it, so the whole stack runs with no API key. The OpenAI clients point at
//     the same fake, so a scripted session runs on --provider openai or
//     openai-responses too, and agents that name openai/… reach it.
//   - Every agent gets the same model, an llm.Router over one client per
//     provider (provider.go): the lead's provider answers plain ids, and a
//     "provider/model" id reaches that provider whatever the lead runs on.
//     Every provider is opened at the start; one that is not configured
//     fails only the agents that use it, with the reason as their error.
//     Cost comes from the default price table and the settings' "prices";
//     the result line's modelUsage reports each model's share.
//   - Claude Code's flags keep Claude Code's meaning. --tools is the tool
//     pool of every agent of the session (a filter; --allowedTools only
//     pre-approves): "" leaves none, "default" all, "Task" is Agent.
//     --dangerously-skip-permissions is --permission-mode bypassPermissions
//     and conflicts with any other mode. --setting-sources limits the
//     settings files read by scope; --settings layers apply whatever it
//     says. It does not touch memory files (CLAUDE.md), agent definitions
//     or skills: Claude Code's documentation ties those to the Agent SDK's
//     settingSources, not to the CLI flag, which names settings files. --max-thinking-tokens is the lead's thinking budget (subagents
//     keep their own; forks inherit it). --fallback-model takes over every
//     request for the lead's model once one has failed with 529 (after the
//     retries) or 404, for the rest of the session, as Claude Code does in
//     print mode, and says so on stderr. --debug takes its filter only in
//     the --debug=LIST form (a bare word after --debug is the prompt).
//   - --mcp-config and --strict-mcp-config are Claude Code's (package mcp
//     runs the servers): a missing file or broken JSON is a usage error
//     before anything starts; a server that fails to start is a warning
//     and the run goes on without its tools. `cohort mcp list` connects to
//     each server and shows its state and tools; `cohort mcp approve NAME`
//     lets a project's .mcp.json server start.
//   - Exit codes: 0 done, 1 a failed run, 2 bad usage or configuration,
//     128+n for a signal (130 for Ctrl-C, as Claude Code and shells).
//     With --output-format json or stream-json, a run that fails before
//     it prints a result (a bad flag, no API key) prints an error result
//     with the same exit code, so a script reading stdout learns why.
//   - The result's permission_denials has Claude Code's fields (tool_name,
//     tool_use_id, tool_input) and Cohort's agent_id and reason: every call
//     the permission checks refused, at any depth, in this process (a
//     teammate in a tmux pane reports its own). A PreToolUse hook's block
//     is not a denial. Text mode says on stderr how many were refused, of
//     which tools, the first reason, and the --allowedTools that allows
//     them.
//   - --json-schema checks the lead's final text, not a tool call: each
//     prompt carries the schema and asks for one JSON value (a ```json
//     fence is accepted); an answer that does not parse or match is sent
//     back with the problems, five answers at most, then the run fails
//     with Claude Code's error_max_structured_output_retries. The matching
//     answer is the result's structured_output (compact JSON), and result
//     keeps the text. Keywords the validator does not know ($ref, format)
//     are annotations, so such schemas validate leniently; a schema whose
//     known keywords have the wrong shape is a usage error naming the path.
//   - stream-json is always verbose (Claude Code requires --verbose with it;
//     we accept and ignore the flag there).
//   - cohort demo is a print-mode session like any other (openSession,
//     drive), not a simulation: its model is the embedded script
//     (demo/team.yaml) written into a temporary directory and loaded through
//     --model scripted:FILE, its project and HOME are temporary, and its
//     environment is sealed (no API keys, COHORT_FLAG_* or user settings), so
//     the user's configuration cannot derail the story. Its narrative is
//     built from the same engine, task and team events the other outputs
//     use. At the end it checks the story's outcome on disk and exits 1 when
//     it was not reached, which makes it a smoke test.
package cli
