// Package cohort runs teams of coding agents: a lead agent that delegates
// to subagents, background agents, forks of itself and named teammates,
// each with its own context, tools, permissions and, when asked, its own
// git worktree. The cohort command line is a client of this package; so
// can your program be.
//
// New makes a Session from a Config whose zero values mean what the
// command line's defaults mean; Run sends a prompt and yields everything
// that follows, from every agent, as Events, the last being the result:
//
//	s, err := cohort.New(ctx, cohort.Config{Dir: "/path/to/project"})
//	if err != nil {
//		return err // a *ConfigError names the field and what to do
//	}
//	defer s.Close()
//	for ev, err := range s.Run(ctx, "Find and fix the flaky test.") {
//		if err != nil {
//			return err
//		}
//		if ev.Type == cohort.EventResult {
//			fmt.Println(ev.Result, ev.TotalCostUSD)
//		}
//	}
//
// The model is Claude Sonnet on ANTHROPIC_API_KEY unless Config.Model,
// Config.Provider (openai, openai-responses) or the settings say
// otherwise; "scripted:FILE" is a scripted model that needs no key. An
// Event's JSON encoding is a line of Claude Code's --output-format
// stream-json. While a Run is going, the control methods (Send,
// Interrupt, SetPermissionMode, SetModel, Agents, StopAgent, Background,
// Message, Compact, Clear) may be called from any goroutine. Inspect
// answers what a session with a Config would have (agent definitions,
// flags, sandbox, MCP servers, memory, sessions) without starting one.
// Config.CanUseTool, AskUser, ApprovePlan, Hooks and Tools are the
// embedding program's part; RemoteRunner is how `cohort worker` runs a
// remote agent's job, as a Session in the job's clone.
//
// Decisions this package makes where the spec is silent:
//
//   - One Run at a time: a second Run while one is going yields ErrBusy.
//     Control methods on a closed session return ErrClosed, never panic.
//   - A slow consumer never stalls an agent: events wait in a queue that
//     holds 4,096 in memory and spills the rest to a temporary file, read
//     back in order. Only task_progress events are coalesced (a newer one
//     replaces an older one of the same task still waiting); nothing is
//     dropped. Events that arrive between Runs are yielded by the next.
//   - Breaking out of Run's loop interrupts the lead's turn, as Esc does;
//     background agents and teammates run on until Close, which stops
//     every agent, teammate and child process and waits for them.
//   - A Run's result carries the session's cumulative usage and cost (as
//     Claude Code's total_cost_usd does), NumTurns and DurationMs for that
//     Run only. Config.StopAfterRun makes each Run end the session's other
//     work before its result (print mode: the result is the last line).
//   - Compact during a turn happens before the lead's next model request;
//     Clear during a turn is refused (ErrBusy): interrupt first.
//   - Config.AutoDream (long-lived sessions only, never with
//     StopAfterRun) consolidates the project's memory in the background
//     after lead turns; Dream runs one now. Workflows run in the
//     cohort-workflow helper program, so programs linking this package
//     never link the JavaScript engine; RunWorkflow runs one without
//     asking the lead's model anything.
//   - A user's Message to a teammate arrives from team-lead, the address
//     its replies go to; to a subagent, as a message marked as the
//     user's, resuming it in the background if it had finished.
//   - Config is translated once, into the plan the session's parts are
//     opened from. A teammate in a process of its own
//     (Config.TeammateMode tmux) gets the Config it inherits as one JSON
//     document in a file of mode 0600, read once and removed: `cohort
//     teammate FILE` decodes it into a Config. Fields a file cannot carry
//     (callbacks, writers, transports, tools) are marked json:"-".
package cohort
