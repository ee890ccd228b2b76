// Package teammate runs teams at run time: the lead's side (Lead:
// TeamCreate, TeamDelete, SendMessage, spawning teammates, answering their
// permission requests, knowing when the team is quiet) and the teammate's
// side (Loop: turning mailbox messages into pieces of work, idle
// notifications, shutdown, plan approval). The team's data — the team file,
// members, the shared task list — is package team; the agents themselves
// are built and run by package crew (NewAgent, Activate), like every
// other agent. Teammates run in-process (a goroutine) or as separate
// `cohort teammate` processes in tmux panes; both use the same Loop and
// talk only through the team's mailboxes (package mailbox), so the two
// backends behave the same.
//
// Design decisions the spec leaves open:
//
//   - The loop, the lead and the inbox use only mailbox.Transport and
//     mailbox.Inbox, as team.Store.Mailbox returns them: files on one
//     machine, JetStream (package mailbox/jsmail) for a team whose file
//     names a NATS server. Either way the acknowledgements are the same:
//     chat when the agent's conversation takes it (chatQueue), protocol
//     messages when they have been handled.
//   - Liveness and idleness are published by each teammate on its team's
//     status board (team.Store.Statuses): a status file,
//     teams/{team}/status/{name}.json, for a team on files; a key in the
//     team's key-value bucket for a team on NATS, so that members on other
//     machines are seen the same way (state, pid and host, a sequence
//     number, a heartbeat, its spend). The lead reads them; a teammate is
//     idle when its status says so and its inbox has no unacknowledged
//     message (mailbox.Transport.Pending), and dead when its process is
//     gone (looked for only on its own host) or its heartbeat is older
//     than DeadAfter (DefaultDeadAfter). On NATS a heartbeat's age is measured from
//     when the reader first saw it, on the reader's clock, since machines'
//     clocks disagree, less how long it was held before the server stored
//     it (package team's kvboard.go: a heartbeat hidden and put back is old).
//   - A teammate found dead has its unfinished tasks released
//     (tasklist.List.Release: unowned and pending again) and the lead's
//     notice names them, so a member whose machine vanished mid-task does
//     not hold its task for ever. A remote teammate's job is stopped then
//     too: its cancellation is stored, so the worker the job is handed to
//     after its ack wait does not run the dead member again. DeadAfter
//     and the heartbeat are the settings' teamLiveness.
//   - The lead holds the team's lead lock (team.Store.Claim) while it leads
//     and publishes a status file of its own (status/team-lead.json) with
//     a heartbeat, like every teammate. Close marks it inactive and gives
//     the lock up, so a session that ends — or is killed — leaves its team
//     orphaned: TeamCreate of that name in a later session takes it over
//     (kept for the same session, replaced for another), TeamDelete of an
//     orphaned team works from any session, and Teams, RemoveTeam and
//     Prune back `cohort teams`.
//   - Liveness goes both ways. A teammate in its own process (a tmux pane)
//     checks its lead every heartbeat through the lead lock: free (the
//     lead's process ended, SIGKILL included), held by another session (the
//     team was taken over) or the team deleted all mean the lead is gone.
//     On NATS the lead may be on another machine, whose lock cannot be
//     seen: there the lead is gone when its status on the board says
//     stopped or has not changed for Config.LeadDeadAfter (10 s), so a lead
//     whose machine vanishes stops its remote teammates within about 12 s.
//     No status of the lead at all (a worker spawned after the lead's
//     machine died and its key was purged: keyattack7) ages the same way,
//     from when the teammate started watching; a live lead's beat, even
//     its second one after a purge, comes well within LeadDeadAfter.
//     A board that cannot be read (the server is away) is not taken for a
//     gone lead.
//     The teammate then lets its current turn run for
//     Config.LeadGoneGrace (2 s) before cancelling it, publishes stopped
//     with the reason, marks itself inactive and Run returns ErrLeadGone;
//     the last one out of the lead's private tmux server (its socket in
//     $COHORT_HOME/tmux) kills that server, which nothing else would. An
//     in-process teammate lives and dies with its lead and does not watch.
//   - A teammate acknowledges a chat message when the engine takes it into
//     the conversation (the Inbox drain), so a message is never lost while it
//     waits for a tool-result boundary; control messages (permission and plan
//     responses, shutdown requests) are acknowledged when handled.
//   - Shutdown: an idle teammate approves a shutdown_request and exits; a busy
//     one refuses, saying it is busy, and the lead may force it after a
//     deadline (cancelling an in-process teammate, killing a pane).
//   - Only the team lead may send permission and plan-approval responses; a
//     response from anyone else is dropped and reported. SendMessage never
//     lets a model send a permission response, so no agent message can
//     approve a permission.
//   - The agent leading a team keeps a record that names no team (it
//     created the team, it did not join it); Lead.Membership maps it to
//     "team-lead" of the team it leads, for SendMessage and (through
//     Lead.Scope) the shared task list.
//   - The lead decides teammates' permission requests with its own prompter
//     (headless policy or --permission-prompt-command); the worker waits with
//     a deadline and a timeout denies.
//   - Claude Code 2.1.332's implicit team (LeadConfig.ImplicitTeam) is an
//     ordinary team named "session-" and the first eight characters of the
//     session id, made when the lead first spawns a named agent: nothing
//     is made for a session that never names one, a resumed session takes
//     its team back like an explicit one (Resume), and it is left orphaned
//     at the end like any team.
//   - Another session of this machine is addressed through SendMessage's
//     "to", as Claude Code 2.1.332 addresses it: by its name (a
//     background session's, any case), its short id or its session id,
//     exactly (LeadConfig.Peers lists them, with ListAgents showing the
//     name first), or by uds:<socket>. An agent of this session, then a
//     member of the sender's team, wins over a session of the same name,
//     as Claude Code's bare name does; a name two sessions share, and a
//     name nothing has, are errors that list the sessions this one knows.
//     options.session_name is Claude Code 2.1.332's too, as its
//     session-service SendMessage has it (the one it offers in cloud and
//     Remote Control sessions; on a user's machine it offers no options,
//     see testdata/claude-code-tools.json): a session's exact title. With
//     to "@find" nothing is sent and the sessions of this machine with
//     that title are listed; with a session's id or short id as to, the
//     message goes only if that is the session's title now. Cohort offers
//     it, and options.priority, on every session, since its sessions of
//     one machine are what Claude Code's session service connects.
package teammate
