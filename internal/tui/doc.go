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
//     elapsed times); the statusLine runs at start and after each Run.
//     (The renderer's own frame ticker compares frames and writes nothing
//     when they are equal.)
//   - Typing during a turn sends the text with Session.Send and shows it
//     as "queued" until Session.Pending says the lead has read it (at its
//     next tool-result boundary, or when the turn ends); then it moves
//     into the conversation.
//   - Esc interrupts the lead's turn (Session.Interrupt); background agents
//     and teammates keep running, and the next Esc asks whether to stop
//     them too. Shift+Tab cycles default → acceptEdits → plan, and through
//     bypassPermissions only when the session started in it.
//   - Permission prompts of every agent (the lead's, subagents',
//     teammates', background agents') come through Prompts.CanUseTool and
//     wait in line; a request from another agent carries its name on its
//     team colour. "Always allow" keeps the checks' suggested rule (else
//     Bash(first-word:*), else the tool) through Decision.AlwaysAllow,
//     which the session saves to .cohort/settings.local.json. A prompt
//     whose asker gives up (its context ends) leaves the screen.
//   - The tree is one key away (Ctrl+T or /agents): ↑↓ select, the lower
//     half shows the selected agent's last activities and its transcript
//     live, m messages it, x stops it, Ctrl+B moves a running synchronous
//     subagent to the background.
//   - /resume lists the project's sessions and opens the chosen one with
//     Options.Resume; the old session is closed and the screen starts
//     fresh with a note saying which session continues.
//   - User commands (.claude/commands/*.md, then .cohort/commands/*.md,
//     which wins) are prompts: $ARGUMENTS takes what follows the name,
//     or the arguments are appended; a built-in name is never shadowed.
//   - A prompt or question that arrives while the terminal is not focused
//     sends OSC 9 and a bell, and runs the Notification hook
//     (Options.Notify).
package tui
