// Package sdkproto serves Claude Code's stream-json input protocol — the
// one the Claude Agent SDK speaks to the CLI it spawns — on a
// cohort.Session: `cohort --input-format stream-json --output-format
// stream-json` reads JSON lines on stdin and writes JSON lines on stdout
// for as long as stdin stays open.
//
// # What goes in and out
//
// In: user messages ({"type":"user","message":{"role":"user","content":…}}),
// control requests from the host ({"type":"control_request","request_id",
// "request":{"subtype",…}}), control responses answering the CLI's own
// requests ({"type":"control_response","response":{"subtype":"success"|
// "error","request_id",…}}), control_cancel_request and keep_alive.
//
// Out: the session's events, each the JSON encoding of a cohort.Event (the
// same lines print mode writes), control responses to the host's requests,
// and the CLI's own control requests: can_use_tool (with
// --permission-prompt-tool stdio) and hook_callback (for hooks the host
// registered in initialize).
//
// # Decisions
//
//   - The session is made when initialize arrives (its hooks, agents,
//     system prompt, appendSystemPrompt and jsonSchema are part of the
//     session's configuration), or with the flags alone when a user message
//     comes first. A second initialize is refused with an error response.
//     systemPrompt replaces Cohort's prompt only when it has text: the SDK
//     sends [""] when the application set none, and Cohort's agents rely on
//     their prompt.
//   - Each user message is one Run, in order; a message that arrives while
//     a turn runs waits for that turn's result (Claude Code folds it into
//     the running turn; a host sees the same answers, one result each). A
//     message is never dropped: at end of input the queued ones still run.
//   - can_use_tool goes to the host for every agent of the session — the
//     lead, subagents, background agents, forks and teammates — naming the
//     asking agent in agent_id (absent for the lead, as Claude Code sends
//     it) plus Cohort's agent_name and agent_kind. The host answers allow
//     (with updatedInput) or deny (with a message, and interrupt to stop
//     the turn). Its decisionClassification "config" (the host decided by
//     itself, with nobody asked) makes an allow count as a mode's: the
//     call still may not write a protected path or outside the session's
//     directories, nor message a socket that is not a session's, which
//     need a person (user_temporary, user_permanent, or no classification,
//     which is read as a person's answer as Claude Code reads it). A value
//     outside the four denies the call and names them. A host that does not answer within the prompt timeout
//     (--permission-prompt-timeout, 10 minutes by default) gets a
//     control_cancel_request and the call is denied with a reason that says
//     so; so is a pending call when stdin closes.
//   - Hooks the host registers run as the session's function hooks: each
//     firing sends hook_callback with the callback id and Claude Code's
//     hook input, and the response payload is the hook's output JSON
//     ({"decision":"block","reason":…}, {"hookSpecificOutput":…}).
//   - Without --replay-user-messages the prompts are not echoed (the
//     session does not emit the lead's own prompt); with it, each user
//     message is written back as received, with isReplay true, before its
//     turn starts.
//   - Bad input never ends the session: a line that is not JSON, a message
//     of an unknown type, an unknown control request subtype and a
//     control_response for no pending request each produce a
//     {"type":"system","subtype":"protocol_error"} line naming the stdin
//     line number and what to do; an unknown control request also gets an
//     error response, so a host awaiting it does not hang.
//   - Supported control requests: initialize, interrupt, set_permission_mode,
//     set_model (null or "default" returns to the session's first model),
//     stop_task (a task id from task_started, or an agent id or name),
//     mcp_status (the session's MCP servers and their states),
//     get_task_output, get_context_usage, mcp_set_servers, mcp_toggle,
//     mcp_reconnect and reload_skills (requests.go, one function each).
//     Others get an error response naming the subtype.
//   - get_task_output of a shell task reads the end of its output file
//     (8 KiB), as Claude Code does. Of an agent task it answers with a
//     page of the agent's messages as this stream carried them (its calls,
//     their results and its words; not what it was told), each message the
//     event's own line whole rather than one content block a frame: after
//     names the last message the host has (absent: from the first), a page
//     holds about 1 MiB, and follow makes a request that finds nothing new
//     while the agent runs wait, up to five minutes, for its next message
//     — one answer per request, since the Agent SDK resolves a request on
//     its first answer (Claude Code's follow sends further live replies,
//     on Remote Control sessions only). A cursor that names no kept
//     message (4,096 are kept an agent) reads from the first, with reset.
//   - get_context_usage answers from the lead's conversation as it stands:
//     the pre-send estimate by part (system prompt, built-in tools, MCP
//     tools, messages, free space) against the model's window; no
//     token-count calls, so "full" and "summary" answer the same.
//   - mcp_set_servers replaces the servers the host set (earlier
//     mcp_set_servers and initialize's sdkMcpServers); configured servers
//     stay, and naming one is an error in the answer's errors. Servers of
//     type sdk are the host's own, reached through mcp_message. mcp_toggle
//     turns a server off (disabled, its tools gone) and on; a server
//     disabled for want of the user's approval stays disabled. After each
//     change, and after reload_skills, the lead gets its new tools from
//     its next request; agents running keep theirs. Requests that wait on
//     MCP servers are answered from a goroutine, so stdin (which carries
//     the host's servers' answers) keeps being read.
//   - SDK-hosted MCP servers (initialize's sdkMcpServers) are servers of
//     the session like any other: their JSON-RPC messages travel as
//     mcp_message control requests (mcpbridge.go). While initialize makes
//     the session, control responses are handled at once — the servers'
//     handshake answers arrive that way — and every other line is held, in
//     order, until the session is ready. keep_alive and control_cancel_request lines are
//     accepted and need nothing: the CLI answers the host's requests at
//     once.
//   - system/init reports claude_code_version as the Claude Code release
//     whose protocol Cohort speaks (cohort.ProtocolVersion), since hosts
//     gate features on it, and cohort_version as Cohort's own.
package sdkproto
