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
//   - Every stdio server Cohort starts runs in the session's sandbox; see
//     The sandbox below.
//   - MCP prompts are slash commands in Claude Code (/mcp__server__prompt),
//     not tools; they come with the terminal UI's slash commands. Resources
//     are tools, as there.
//
// # The sandbox
//
// Decision (issue 36): every stdio server Cohort starts — from .mcp.json,
// user, local or project settings, --mcp-config, an agent definition's
// mcpServers, a host's mcp_set_servers, and for `cohort mcp list` —
// runs inside the session's sandbox (package sandbox), as command hooks
// do (package hook, "The sandbox"), through Options.Launch. Approving a
// server approves the program it names, not what that program goes on to
// read: `python3 -m tools.srv` runs a module, `npx pkg` a package.json
// and node_modules, `uv run` a pyproject, all files the model may have
// written in this session or an earlier one. Confined, a server the model
// steered can do no more than the model's own approved Bash commands.
//
//   - Files: the writing profile of the server's working directory — the
//     session's directory, or for an agent definition's own servers the
//     agent's (an isolated agent's worktree, never the main checkout
//     then). It writes there, in the session's other working
//     directories, the private TMPDIR, the cache dir (~/.cache) and
//     sandbox.allowWrite; what Read deny rules cover and Cohort's secret
//     parts of COHORT_HOME are hidden; protected paths (.git control
//     files, .cohort/, .claude/, .mcp.json, hook scripts' folders) are
//     read-only.
//   - Processes: no other process's /proc entry is open to it (the pid
//     namespace and Landlock's scope), so Cohort's environment, which
//     holds the API key, cannot be read; its environment is Cohort's
//     without credentials (package childenv) plus the settings' env and
//     its own; it inherits no descriptor but its stdio (the launcher's
//     socket is close-on-exec); it is killed with the session, with
//     whatever it left running, even when Cohort is killed.
//   - Network: as the sandbox's policy says (sandbox.network), the same
//     for servers as for Bash commands and hooks: open by default, since
//     most servers call an API; with "deny" a server that needs the
//     network fails to start and says so in its stderr. A separate
//     setting for servers would be a second place to forget.
//   - npm: npx-based servers, the most common kind, write npm's cache
//     (~/.npm by default, not writable in the sandbox). Each server gets
//     a private one in the session's TMPDIR (npm_config_cache, unless the
//     environment sets it already), removed with the session. The user's
//     ~/.npm is not made writable: npx runs packages from it
//     (~/.npm/_npx), and the user's own npx calls run them outside any
//     sandbox, so a writable ~/.npm would let a steered server plant code
//     the user runs later. The cost is a download per session for a
//     server whose package is not installed (a server run as `node
//     path/to/index.js`, or from an installed package, costs nothing).
//   - What a server may do that a hook may not: nothing more on the
//     file system (hooks also get the literal files their command names
//     as output, servers no such grant); the private npm cache is the
//     only addition.
//
// A server may opt out with "sandbox": false in its definition; it then
// runs with the user's rights (still reaped with the session), and Cohort
// says so at the start of each session. The key is honoured only where
// the model cannot write it: user settings (the home is read-only for
// commands), local settings, and the project's files (.mcp.json and
// project settings: protected paths, which commands cannot write and the
// file tools write only with a person's approval; and the key is part of
// the fingerprint a project server is approved by, so adding it to an
// approved server asks again). From --mcp-config or a --settings document
// (any file, one the model wrote included), an agent definition (the
// model may write one in the project, and a definition's server starts
// within the same session), a host's mcp_set_servers, or a file that lies
// where agents' commands write (a subfolder's .mcp.json or settings,
// obeyed only as a person approved its content: the approval does not
// cover the program it names) it is reported and the server runs
// confined. On an http server, which starts no process,
// it is reported and ignored.
//
// Decision (issue 36): a server that runs outside the sandbox
// (Spec.Unconfined) runs a program the model may rewrite (`node
// tools/server.js`, `./bin/serve.sh`). Its command, arguments and env (with
// the environment it inherits) are judged as every opted-out program is
// (hook.Judge, the rule in package hook): it runs unconfined only when
// nothing it is started with lies in a tree agents write (its program as
// PATH finds it, its script, paths its arguments name, its search-path
// variables) and its shape is one known to load no code from its working
// directory (an interpreter running a script, not npx, uvx or a binary
// Cohort does not know, when it runs in the project). Otherwise the
// server runs confined and the start-up notice says why and what to
// change. What the program computes at run time beyond that is the cost
// "sandbox": false states in its notice. Its script is still a protected
// path (hook.ScriptsOf), as a hook's is.
//
// Where the session has no sandbox (sandbox.enabled false, --sandbox off,
// a machine without one) servers run as Bash commands then do: through
// the unconfined launcher that reaps them with the session, with Cohort
// made non-dumpable so that its /proc entries stay closed to them. A
// server the sandbox cannot start (its policy fails to set up) fails to
// start; it never runs unconfined instead.
package mcp
