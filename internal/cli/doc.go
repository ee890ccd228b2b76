// Package cli is the cohort command line, a client of package cohort: it
// parses the flags into a cohort.Config (options.go; the flags that are
// the command line's own — print mode, output and input formats, the
// Agent SDK protocol's, --debug — stay beside it), runs a Session, and
// prints what it yields: print mode's text, json and stream-json, the
// interactive terminal UI (package internal/tui), the Agent SDK's
// stream-json protocol (package internal/sdkproto), and the listings
// (agents, flags, doctor, mcp, memory, sessions, teams, workflows), which
// it formats from cohort.Inspect's data.
//
// Design decisions the spec leaves open:
//
//   - Run takes its environment as an Invocation (args, streams, getenv),
//     so tests run the CLI in-process, in parallel, without touching the
//     real environment; cmd/cohort passes the process's.
//   - A Config's values are checked once, by cohort.New (Config's check);
//     the command line checks only its own flags. A cohort.ConfigError
//     names the fields it is about as Config.Name; the command line says
//     the flag that sets each instead (flagOf), so its messages speak of
//     --tools, not Config.ToolPool.
//   - Claude Code's flags keep Claude Code's meaning. --tools is the tool
//     pool of every agent (a filter; --allowedTools only pre-approves): ""
//     leaves none, "default" all, "Task" is Agent.
//     --dangerously-skip-permissions is --permission-mode
//     bypassPermissions and conflicts with any other mode.
//     --setting-sources limits the settings files read by scope; --settings
//     layers apply whatever it says. It does not touch memory files, agent
//     definitions or skills: Claude Code's documentation ties those to the
//     Agent SDK's settingSources, not to the flag, which names settings
//     files. --debug takes its filter only in the --debug=LIST form (a
//     bare word after --debug is the prompt). --resume alone resumes the
//     project's latest session, as --continue.
//   - argv is read as Claude Code's parser (commander) reads it, before
//     cobra sees it (argv.go): the variadic options (--allowedTools,
//     --disallowedTools and their dashed forms, --tools, --add-dir,
//     --mcp-config, --betas) take the argument after them whatever it
//     looks like, then every argument up to the next one that starts with
//     "-"; --flag=value is one value; "--" ends the options. Each value
//     reaches cobra as --flag=value, so cobra never guesses. The prompt is
//     the first argument left (Claude Code ignores the others; Cohort
//     names them in a warning). When the line has no prompt and a variadic
//     option's last value reads as one (words, not a rule, a tool, a path
//     or JSON: looksLikePrompt), a warning says which value went to which
//     flag and to put the prompt before it or after --. A variadic option
//     with nothing after it, and an unknown flag (named with the nearest
//     known ones), are usage errors before anything runs. internal/cli/e2e/argv
//     holds the table that checks this against Claude Code's own record.
//   - Exit codes: 0 done, 1 a failed run, 2 bad usage or configuration,
//     128+n for a signal (130 for Ctrl-C, as Claude Code and shells).
//     With --output-format json or stream-json, a run that fails before
//     it prints a result (a bad flag, no API key) prints an error result
//     with the same exit code, so a script reading stdout learns why.
//   - Text mode says on stderr how many tool calls the permission checks
//     refused, of which tools, the first reason, and the --allowedTools
//     that allows them.
//   - stream-json is always verbose (Claude Code requires --verbose with
//     it; we accept and ignore the flag there).
//   - `cohort teammate FILE` is how a lead starts a teammate in a tmux
//     pane: FILE holds the teammate's Config as JSON (its lead's
//     credentials included, mode 0600); the command reads it, removes it
//     and runs the teammate until its lead shuts it down.
//   - cohort demo is a print-mode session like any other, not a
//     simulation: its model is the embedded script (demo/team.yaml)
//     written into a temporary directory and loaded through --model
//     scripted:FILE, its project and HOME are temporary, and its
//     environment is sealed (no API keys, COHORT_FLAG_* or user settings),
//     so the user's configuration cannot derail the story. Its narrative
//     is built from the same events the other outputs use. At the end it
//     checks the story's outcome on disk (the team's files, through
//     packages team and tasklist) and exits 1 when it was not reached,
//     which makes it a smoke test.
//   - Background sessions (package bgsession keeps their registry):
//     cohort --bg re-executes the same command line detached with the
//     hidden --bg-run ID in place of --bg, and the re-executed session
//     keeps its record, writes print mode's verbose text to its log, and
//     lives until it is stopped; its permission prompts wait (never
//     approved on their own). cohort agents lists these sessions, as
//     Claude Code's does: on a terminal (stdin and stdout, and no --json)
//     the live view (tui.RunSessions), where Enter attaches here and the
//     view comes back when the UI ends, n starts a session with the
//     view's defaults (the session flags and --cwd given to cohort
//     agents), x stops one; otherwise a table, or JSON with --json. The
//     agent definitions it used to list are cohort agents --definitions. attach runs the terminal UI on a
//     running session through its control socket (bgsession/attach)
//     and reopens an ended one from its transcript. respawn stops a
//     running session and starts it again on this binary with --resume
//     in its directory (its worktree, if it has one) and the session
//     flags its record keeps (sessionFlags: every flag given that
//     describes the session, not those of the command line itself, of
//     the conversation to open, or of --bg). --bg's own flags (-n/--name,
//     -w/--worktree; `cohort --help` documents them "with --bg") without
//     --bg are a usage error (exit 2) before anything runs, not silently
//     unused: a print-mode or interactive session has no name other
//     sessions could reach it by, and a user who typed one (as a Claude
//     Code user names a session) must learn so before the run.
//   - cohort worker serves remote agents' jobs with package remote's
//     Worker, each job run by cohort.RemoteRunner.
package cli
