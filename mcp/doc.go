// Package mcp connects Cohort's agents to MCP servers through the official
// Go SDK (github.com/modelcontextprotocol/go-sdk): stdio servers (command,
// args, env) and streamable HTTP servers (url, headers), configured in
// Claude Code's format — .mcp.json in the project, mcpServers in settings,
// --mcp-config files or JSON, and an agent definition's mcpServers. Each
// server tool becomes a tool.Tool named mcp__<server>__<tool>; the
// servers' resources are read through ListMcpResourcesTool and
// ReadMcpResourceTool, as Claude Code names them.
//
// Design decisions the spec leaves open:
//
//   - Servers start with the session, all at once, and the session waits
//     for them (each bounded by Options.StartTimeout, default 30 s, the
//     MCP_TIMEOUT variable in milliseconds): the tool array is part of the
//     cached prompt prefix, so it is fixed before the lead's first request
//     rather than changing as servers come up. A server that fails or does
//     not answer in time is reported (what failed, the end of its stderr,
//     what to do) and the session runs without its tools.
//   - Tools keep the order the server lists them in, servers sorted by
//     name; a tool whose input schema Cohort cannot use (tool.CheckSchema,
//     and a top-level type other than object) or whose full name is over
//     64 characters is skipped with a warning naming it; the rest of the
//     server's tools stay.
//   - MCP tools are never read-only to the permission check: a server's
//     readOnlyHint is its own claim, so calls ask unless a rule allows them
//     (mcp__server, mcp__server__tool), as in Claude Code. The hint only
//     lets a call run beside other concurrency-safe calls. The resource
//     tools only read and need no approval.
//   - A stdio server's process runs through internal/proc in its own
//     session and process group, and stops with close-stdin → SIGTERM →
//     SIGKILL to the group; Server.Close returns once it is reaped. If
//     Cohort itself is killed, the server's stdin reaches EOF, which makes
//     an MCP stdio server exit.
//   - A stdio server whose process exits is reported and restarted once,
//     at once, by the goroutine that watches it; calls made meanwhile wait
//     for the restart. The call that was running when it died gets an
//     is_error result saying so (it is never retried: it may have had
//     effects). A second exit leaves the server failed, and its tools
//     answer why. The tool list after a restart is not read again: the
//     pool, and so the cached prompt, keeps the first one. HTTP servers
//     have no process to watch; a broken connection is the call's error.
//   - A project server (.mcp.json, or mcpServers in a project settings
//     file) is Disabled until the user approves what it runs: its type,
//     command, args, env, URL and headers as written (Spec.Fingerprint, a
//     hash taken before ${VAR} expansion, so a rotated token in the
//     environment needs no new approval). `cohort mcp approve NAME`
//     records the name in enabledMcpjsonServers (Claude Code's key) and
//     the fingerprint in approvedMcpjsonServers (Cohort's) in
//     .cohort/settings.local.json (Approve). A server whose definition
//     changed since is not started and is reported with what it would run
//     now, and so is one approved by name only (Claude Code's approval
//     says nothing of what runs): the file is where a model that got past
//     every other layer would plant a program for the next session.
//     enableAllProjectMcpServers trusts whatever the project defines, as
//     the user who set it asked. Approvals are read from user, local and
//     command-line settings only — a repository cannot approve its own
//     servers in its committed settings. Servers from --mcp-config, user
//     or local settings and agent definitions count as approved. Disabled
//     servers are listed (state "disabled") and never started.
//   - An .mcp.json that does not parse is reported with its file, line
//     and column and what to do; none of its servers is started, and the
//     servers of the other sources load as usual.
//   - ${VAR} and ${VAR:-default} are expanded in commands, arguments, env
//     values, URLs and headers, as Claude Code does. A stdio server's
//     environment is the session's (without the credentials Cohort holds,
//     package childenv) plus the settings' env, plus its own env entries.
//   - The deprecated SSE transport is refused with a message; so are
//     unknown fields, which are usually typos.
//   - Servers in the program that hosts the session (TypeSDK: the Agent
//     SDK host's createSdkMcpServer servers, reached over the control
//     protocol by internal/sdkproto, or Config.MCPTransports) are started
//     and listed like the others and count as approved.
//   - The host may change the servers while the session runs (dynamic.go):
//     Set.Replace makes a list its servers (scope dynamic, or sdk) and
//     leaves the configured ones alone, refusing a name one of them has;
//     Toggle turns a server off (state disabled) and on — a server
//     disabled for want of approval stays so; Reconnect starts a server
//     again. A changed server is closed and started anew.
//   - MCP prompts are slash commands in Claude Code (/mcp__server__prompt),
//     not tools; they come with the terminal UI's slash commands. Resources
//     are tools, as there.
package mcp
