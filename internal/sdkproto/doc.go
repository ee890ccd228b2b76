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
//     stop_task (a task id from task_started, or an agent id or name) and
//     mcp_status (the session's MCP servers and their states). Others get
//     an error response naming the subtype.
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
