// Package tui is Cohort's interactive terminal UI: the conversation with
// the lead, typed-ahead input, dialogs for permission prompts and
// questions, slash commands, and a live tree of every agent of the
// session with its state, tokens, cache reads, tool calls and cost. It is
// a client of package cohort's Session and its events, nothing more (the
// arch test holds it to that); cmd/cohort runs it when no -p is given.
//
// Decisions the spec leaves open:
//
//   - One frame, full screen (the alternate screen), drawn from the
//     model's state only: the conversation or the tree on top, the input
//     or the dialog below, the status line last. Every line is cut to the
//     width and the frame to the height, down to a 20×5 terminal.
//   - Everything that came from outside — model text, tool results, agent
//     names and descriptions, statusLine output — goes through Clean
//     before it is laid out: escape sequences and control characters are
//     dropped, so nothing a tool prints reaches the terminal. A transcript
//     keeps its last 400 entries and each entry its last 64 KB (a 10 MB
//     stream shows its end and says how much came before).
//   - Events reach the program in batches (feed): a Run's goroutine appends
//     and wakes the loop once; the loop takes everything that came. The
//     tree is rebuilt from Session.Agents at most every 100 ms while
//     events come, and only the rows on screen are formatted.
//   - No ticking when idle: no blinking cursor, no spinner. A one-second
//     clock runs only while some agent other than the lead works (for
//     elapsed times); the statusLine runs at start and after each Run,
//     through Options.RunStatusLine (the session's runner, which confines
//     it in the session's sandbox as a command hook; the UI imports no
//     sandbox).
//   - The UI draws with its own painter (painter.go), not bubbletea's
//     renderer, which wakes 60 times a second to compare frames even when
//     nothing changed (136 ms of CPU in an idle 10 s here). The program
//     runs with its renderer off and its ticker at 1 Hz; the painter
//     rewrites the lines that changed, at most once a frame, in a
//     synchronized update, and sends nothing else but its modes (alternate
//     screen, hidden cursor, focus reports, bracketed paste). Run puts the
//     terminal in raw mode and follows SIGWINCH, which went with the
//     renderer. Colours go through colorprofile (NO_COLOR, TERM).
//   - Siblings in the tree are in the order of their labels, so rows stay
//     put as agents start and finish; the lead is first, children under
//     their parent.
//   - Model text is drawn from its Markdown by a small renderer of our
//     own (markdown.go), not glamour, which would bring text/template
//     (reflect.Value.Method) into cmd/cohort, which the arch test keeps
//     out to keep the binary lean: fences are dropped and the code shown
//     on its colour, cut (not word-wrapped) at the width; headings bold;
//     list items with a bullet (or their number) and a hanging indent;
//     quotes behind a bar; rules as a short line; **bold**, *italic*,
//     `code` and [text](url) as styles, a mark inside a word
//     (snake_case) left as written. Tables and HTML are shown as written.
//   - What the lead reads besides the user's prompts is one line each: a
//     task notification its summary, a teammate's message "name: summary
//     or first line"; the model's framing of typed-ahead text is not
//     shown (the text is, as the user's line).
//   - Typing during a turn sends the text with Session.Send and shows it
//     as "queued" until Session.Pending says the lead has read it (at its
//     next tool-result boundary, or when the turn ends); then it moves
//     into the conversation at once, not with the lead's next reply.
//   - Esc interrupts the lead's turn (Session.Interrupt) and says so in
//     one line, "interrupted by you", which names the background agents
//     still running only when there are some (the synchronous subagents
//     stop with the turn): they keep running, and the next Esc asks
//     whether to stop them too. The interrupted Run's error result is not
//     shown again, and a tool call the interrupt cut short reads
//     "stopped". Shift+Tab cycles default → acceptEdits → plan, and through
//     bypassPermissions only when the session started in it.
//   - Permission prompts of every agent (the lead's, subagents',
//     teammates', background agents') come through Prompts.CanUseTool and
//     wait in line; a request from another agent carries its name (else
//     its description, never a bare id) and its kind as it is now (a
//     subagent moved to the background asks as "background") on its team
//     colour. "Always allow" keeps the checks' suggested rules — one per
//     command of a chained Bash line — else Bash(first-word:*) for each
//     command of a line plain enough to split (none for one with quotes,
//     expansions or redirections), else the tool, through
//     Decision.AlwaysAllow, which the session saves to
//     .cohort/settings.local.json. A prompt whose asker gives up (its
//     context ends) leaves the screen.
//   - A prompt shows what it approves, prepared on the asker's goroutine:
//     Edit and MultiEdit as a unified diff of the file as it is now
//     against the file after the edits (line numbers, three lines of
//     context, removals red, additions green; without the file — over
//     4 MB, binary, or an old_string not in it, said so — each edit's
//     strings diffed); Write and NotebookEdit their content, numbered;
//     Bash its whole command (every line) and the directory it runs in.
//     A call that runs outside the sandbox (dangerouslyDisableSandbox
//     honoured, an excluded command) says so in red; when the sandbox
//     would block what the command is seen to write (mkdir, touch, cp's
//     target, redirections...: permission.WriteTargets), the prompt says
//     so and offers to let commands write that directory for the session
//     (Decision.AllowWrite: sandbox.allowWrite for this session, not
//     saved; never the root, the home, Cohort's home or ~/.claude).
//     Binary content is described by its size, never shown; a body keeps
//     its first 2,000 lines of at most 1,000 characters, and says what it
//     left out. The body scrolls (↑↓, PgUp/PgDn, Home/End), starting at
//     the first change; the prompt may take the screen but a line of the
//     conversation, the border and the status. On a terminal too small
//     for it, the answers shrink to one line that also says how to page
//     and where the page is, and who asks gives way to the call and the
//     body.
//   - A teammate that must have its plan approved (planModeRequired)
//     asks the user, not the lead model, through Config.ApprovePlan: the
//     plan with the teammate's badge; 1 approves, 2 approves with
//     feedback, 3 rejects with feedback typed in.
//   - The tree is one key away (Ctrl+T or /agents): ↑↓ select, the lower
//     half shows the selected agent's last activities and its transcript
//     live, m messages it, x stops it, Ctrl+B moves a running synchronous
//     subagent to the background. In the conversation, Ctrl+B moves every
//     running synchronous subagent there, so the lead's turn goes on.
//   - The sessions view (RunSessions, cohort agents) is the tree one level
//     up: every background session of the machine, newest first, with its
//     state, agents, cost and last activity, and the selected one's
//     directory and last line. The registry is files that say nothing
//     when they change, so the view reads it again a second after each
//     read ends (a dead session's socket costs its probe, off the loop);
//     the selection follows its session by id across reads. Enter ends
//     the view with the chosen id (the caller attaches and runs the view
//     again), n types a prompt for a new session (Esc gives it up), x
//     stops the selected one (off the loop: stopping waits for the
//     process), q or Esc quits.
//   - /resume lists the project's sessions and opens the chosen one with
//     Options.Resume; the old session is closed and the screen starts
//     fresh with a note saying which session continues.
//   - /rewind, or Esc twice on an empty input while idle, lists the
//     prompts the session took checkpoints before (newest first), asks
//     what goes back (code and conversation, code, conversation), and
//     shows the dry run's plan: the files that will change, relative to
//     the project, the files the user changed after the checkpoint (enter
//     is refused, and says so, until f allows overwriting them) and the
//     branches agents committed to (moved back only when b says so).
//     Protected paths are listed, not restored: cohort rewind --protected
//     does that.
//   - User commands (.claude/commands/*.md, then .cohort/commands/*.md,
//     which wins) are prompts: $ARGUMENTS takes what follows the name,
//     or the arguments are appended; a built-in name is never shadowed.
//   - A prompt or question that arrives while the terminal is not focused
//     (focus reports, mode 1004) sends OSC 9 and a bell; the session runs
//     the Notification hooks itself before it asks, as for any CanUseTool.
package tui
