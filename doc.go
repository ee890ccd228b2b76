// Package cohort runs teams of coding agents: a lead agent that delegates
// to subagents, background agents, forks of itself and named teammates,
// each with its own context, tools, permissions and, when asked, its own
// git worktree. The cohort command line is a client of this package; so
// can your program be.
//
// # Quick start
//
// New assembles a session — model, settings, agent definitions, tools,
// permissions, hooks, tasks, the team layer — from a Config whose zero
// values mean what the command line's defaults mean. Run sends a prompt
// and yields everything that follows, from every agent, as Events:
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
// otherwise; Model "scripted:FILE" runs a scripted model that needs no
// key (llm/fakeapi). Call Run again for the next prompt of the same
// conversation; Config.Resume continues a session from its transcript.
//
// # Events
//
// Event is one type for every agent's events: the lead's and its
// subagents' assistant and user messages (ParentToolUseID names the Agent
// call a subagent runs for, AgentID the agent), task events
// (system/task_started, task_progress, task_notification), retries
// (system/api_retry), compactions, team activity (system/team), and last
// the result of the Run. Its JSON encoding is a line of Claude Code's
// --output-format stream-json: `cohort -p … --output-format stream-json`
// prints exactly json.Marshal of each event. Partial messages
// (stream_event) come with Config.PartialMessages.
//
// A slow consumer never stalls an agent: events wait in a queue that
// holds 4,096 in memory and spills the rest to a temporary file, read back
// in order. Only task_progress events are coalesced (a newer one replaces
// an older one of the same task still waiting); nothing is dropped. Events
// that arrive between Runs (background agents still working) are yielded
// by the next Run.
//
// # Control
//
// While a Run is going, from any goroutine: Send queues more input for
// the lead (typing ahead), Interrupt stops its turn, SetPermissionMode and
// SetModel change it from its next step, Agents lists every agent with its
// state, usage and last activities, StopAgent stops one, Background moves
// a running synchronous subagent to the background, Message writes to a
// teammate or subagent. Compact summarises the lead's history; Clear
// starts a new conversation. Breaking out of Run's loop interrupts the
// lead's turn and leaves background agents and teammates running until
// Close, which stops every agent, teammate and child process and waits
// for them.
//
// # The embedding program's part
//
// Config.Tools adds tools (tool.New builds one from a typed input);
// Config.CanUseTool answers every permission prompt of every agent, with
// the asking agent named; Config.AskUser answers AskUserQuestion;
// Config.Hooks runs Go functions as hooks, with Claude Code's hook input
// and answers; Config.Role runs the session as one teammate of a team (what
// `cohort teammate` does).
//
// # Remote agents
//
// With Config.Remote naming a NATS server (or the user settings' "remote"
// object) and the remote_agents flag on, an Agent call with isolation
// "remote" runs on a worker (package remote): its result arrives as a
// notification like a background agent's, its work on a branch
// cohort/remote-<id>. LeadSigner is the key the session signs jobs with;
// a worker's trust file needs its PublicKey line. RemoteRunner is how
// `cohort worker` runs each job: as a Session in the job's clone.
//
// Decisions this package makes where the spec is silent:
//
//   - One Run at a time: a second Run while one is going yields ErrBusy.
//     Control methods on a closed session return ErrClosed, never panic.
//   - A Run's result carries the session's cumulative usage and cost (as
//     Claude Code's total_cost_usd does), NumTurns and DurationMs for that
//     Run only.
//   - Config.StopAfterRun makes each Run end the session's other work
//     before its result (print mode: the result is the last line).
//   - Compact during a turn happens before the lead's next model request;
//     Clear during a turn is refused (ErrBusy): interrupt first.
//   - Project memory (packages memory and dream): the lead's first message
//     says where the project's memory dir is and carries its MEMORY.md
//     as loaded (naming the file, and whether it was cut to the limits);
//     the file tools write there without asking, and the sandbox lets
//     Bash write there. Config.AutoDream (long-lived sessions only; never
//     with StopAfterRun) runs the dream gates after each lead turn in the
//     background; a dream is a task of type dream that Run never waits for
//     and Close stops, rolling its lock back. Session.Dream runs one now
//     and yields its events until it ends (cohort dream).
//   - Workflows: scripts run in the cohort-workflow helper program
//     (Config.WorkflowHost, $COHORT_WORKFLOW_HOST, beside the executable
//     or on PATH), so programs linking this package never link the
//     JavaScript engine. With the workflows flag the lead has the Workflow
//     tool; RunWorkflow runs one without asking the lead's model anything
//     (cohort workflow run and resume). A run is one node in Agents, with
//     its agents below it (package workflowrun).
//   - A user's Message to a teammate arrives from team-lead, the address
//     its replies go to; to a subagent, as a message marked as the
//     user's, resuming it in the background if it had finished.
package cohort
