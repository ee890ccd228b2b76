// Package agent defines agent types: the definitions read from Markdown
// files with YAML frontmatter (Claude Code's format, loaded unchanged), from
// --agents JSON and from Cohort's built-ins; the catalog that decides which
// definition is in force for each name; the tool pool an agent gets
// (Pool); and the model an agent runs on (ResolveModel).
//
// # Where definitions come from
//
// Precedence, lowest first (a higher one replaces a lower one of the same
// name; names are case-sensitive):
//
//  1. built-in: general-purpose, Explore and Plan (flag
//     builtin_explore_plan_agents), verification (flag verification_agent);
//  2. user: ~/.claude/agents, then $COHORT_HOME/agents;
//  3. project: <root>/.claude/agents, then <root>/.cohort/agents;
//  4. cli: --agents '<json>'.
//
// Within a level a .cohort directory beats a .claude one: the .claude
// directories are read for compatibility (LoadConfig.ClaudeCompat), and a
// user who keeps both means Cohort's to win. The project root is the nearest
// ancestor of the working directory holding a .git entry (so a linked
// worktree uses its own checked-out agents), else the working directory.
// A directory reached twice (the project root is the home directory) is read
// once, at its lower level.
//
// Directories are searched recursively for *.md files in lexical order, so
// agents can be grouped in subdirectories. Hidden files and directories are
// skipped, symbolic links to files are followed, links to directories are
// not (no cycles). When one directory defines a name twice the first file in
// path order wins and the other draws a warning. The file name does not
// matter; the name field does.
//
// # Parsing
//
// Field names and meanings are Claude Code's. tools and disallowedTools take
// a YAML list or a comma-separated string; "Task" is read as "Agent", its
// old name. Agent(worker, reviewer) in tools restricts which agent types the
// agent may spawn (Definition.AgentTypes). Other specifiers, e.g.
// Bash(git:*), are ignored with a warning in tools (the whole tool is kept:
// permission rules are where calls get narrowed) and, failing closed, remove
// the whole tool in disallowedTools. A tools key that is absent, null or an
// empty string means all tools; an empty list means none. Names that are
// not tools (not in LoadConfig.KnownTools, not in CohortTools and not
// mcp__…), Claude Code tools Cohort does not provide (BashOutput,
// LSP, …) and WebSearch in a session whose provider has no
// server-side search are dropped with a warning; for an allow-list this
// leaves the agent with fewer tools, never more. A Cohort tool the session
// merely lacks (the team tools with agent_teams off) is kept quietly.
//
// Names are Claude Code's: letters, digits, "_", "-" and "." (published
// agents are named after versions, dotnet-framework-4.8-expert), starting
// with a letter or digit, at most 64 characters.
//
// Two kinds of invalid YAML are common in hand-written files and read by
// Claude Code: a value holding an unquoted ": " (descriptions) and a bare
// "*" (tools: *, which YAML takes for an alias). When the frontmatter fails
// to parse, such top-level values are quoted and the parse retried, with a
// warning on each line changed. Everything else that is wrong is an error
// naming the file and line, except an unknown key and an unknown color,
// which are warnings. A malformed file never stops the
// others from loading.
//
// hooks must have the shape of Claude Code's schema (events mapping to
// groups with a "hooks" list of typed entries); an agent whose hooks do not
// is refused, as Claude Code refuses it: loading it without its hooks would
// run it without the guards its author wrote. mcpServers, memory, isolation
// and background are validated and kept for the code that implements them. effort reaches the model through
// llm.Request.Effort (Definition.EffortFor: the agent's own level, else its
// parent's). initialPrompt is the first user turn when a definition runs as
// the main agent.
//
// # Tool pool
//
// Pool applies its layers in order and keeps the caller's
// canonical order. Decisions the spec leaves open:
//
//   - MCP tools (mcp__…) skip the type layers (lead-only, custom-agent,
//     async and teammate lists) but still obey the definition's tools and
//     disallowedTools, so `tools: Read` means Read only; an entry "mcp__srv"
//     or "mcp__srv__*" names every tool of a server. Tools of the
//     definition's own MCP servers (PoolInput.OwnMCP) bypass its tools list.
//   - Subagents, synchronous and background, get no Agent, no SendMessage
//     and no team or task-list tools (TeamCreate, TeamDelete, TaskCreate,
//     TaskGet, TaskUpdate, TaskList), as in Claude Code, whose users report
//     runaway recursive spawning where these leak. A definition whose tools
//     list names Agent (bare or Agent(type, …)) gets Agent and SendMessage
//     back, Agent still cut at the depth limit; "*" or no list does not
//     count. The team and task-list tools never reach a subagent: it is in
//     no team.
//   - Teammates get the async allow-list plus SendMessage, ListAgents, the
//     task-list tools and, only when they start in plan mode, ExitPlanMode,
//     which the lead-only layer would otherwise remove.
//   - An agent other than the lead that starts confined to a worktree
//     (PoolInput.Isolated) gets no EnterWorktree or ExitWorktree: it cannot
//     leave its worktree, and the pool is computed at its start, so an
//     agent that enters one later keeps both.
//   - LS and MultiEdit, which do what Glob (or ls through Bash) and Edit
//     do, reach a subagent or background agent only when its definition
//     names them ("*" does not): a worker pays for its tool array on every
//     request. The lead, teammates and forks keep them (NamedOnly).
//   - MCP tools are offered on demand (tool/toolsearch) when there are
//     many: when the pool's MCP definitions (names, descriptions, input
//     schemas) together pass a tenth of a 200,000-token context window at
//     4 bytes a token, 80,000 bytes (MCPOnDemand), the rule of Claude
//     Code's default (ENABLE_TOOL_SEARCH=auto, "10% of the context").
//     Below it they are sent whole: a few small servers cost less than the
//     round trip of loading them. The decision is the pool's, per agent,
//     so a subagent whose definition keeps one server only decides on that
//     server's size. A definition that names the tool or its server
//     ("mcp__srv", "mcp__srv__*"; not "*") keeps those loaded, and one that
//     disallows ToolSearch keeps all of them loaded.
//   - Excluded says why a pool leaves each tool out, in words for the
//     model: a call to a tool the agent lacks is answered with the reason
//     and the tools it has.
//   - Plan mode is a filter, applied last and to MCP tools too: it keeps
//     ExitPlanMode where an earlier layer left it, and what the caller's
//     ReadOnly predicate approves.
//   - The lead gets every tool (no Agent when MaxDepth is 0), filtered by
//     its definition when it runs one, by coordinator mode when that is on,
//     and by plan mode. Forks do not use Pool: they reuse the parent's tool
//     array byte for byte, and what a subagent's pool would leave out of it
//     (Excluded) is refused when they call it, LS and MultiEdit aside.
//
// # Model
//
// ResolveModel: COHORT_SUBAGENT_MODEL > the Agent call's model > the
// definition's model > the parent's; "inherit" (or nothing) means the
// parent's. Aliases opus, sonnet and haiku map through a configurable table;
// other ids, including scripted:FILE, pass through unchanged.
package agentdef
