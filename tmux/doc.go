// Package tmux is the terminal layer of the tmux teammate backend: it puts
// a teammate's command (`cohort teammate --team T --name N …`) in a new
// tmux pane, watches whether it still runs, shows its output and removes
// it. Every call to tmux is a short-lived client run through
// internal/proc, bounded by the caller's context (or a 10 s default when the
// context has no deadline); failures carry tmux's own message
// (CommandError).
//
// A Server is either the user's tmux (Current, found through $TMUX, with
// panes split from $TMUX_PANE) or a private server on a socket of our own
// (StartServer: `tmux -f /dev/null -S <socket> new-session -d`) for headless
// runs and tests. Only a private server is killed by Close.
//
// # Decisions the spec leaves open
//
//   - No shell ever parses a teammate's command. Since tmux 2.0,
//     split-window and respawn-pane execute a command given as two or more
//     arguments with execvp(3); we pass PaneSpec.Argv that way after "--",
//     and hand a lone argument to env(1) (tmux would give a single argument
//     to the user's default-shell, which might not even be POSIX). tmux's
//     own command parser ends a command at any argument ending in ';', so
//     such arguments are escaped ("a;" is sent as `a\;`), which keeps a
//     teammate's argument from smuggling in a tmux command. Values that
//     tmux expands as formats (the directory of -c, the title of -T) have
//     '#' doubled, so "#(…)" cannot run a command and "#{…}" stays literal.
//     tmux 2.0 is therefore the oldest version accepted (ErrTooOld).
//   - Environment variables go in with respawn-pane -e on tmux 3.0 and
//     later, and through an `env KEY=VAL … argv` prefix before that.
//   - A pane is created in two steps. split-window (or new-window) first
//     runs a placeholder (`sleep`), then one chained tmux command sets
//     remain-on-exit on the pane, sets its title, replaces the placeholder
//     with the real command (respawn-pane -k) and applies the layout. tmux
//     runs a chain without handling events in between, so even a command
//     that dies at once leaves its pane and its last output behind, and
//     split-window can keep -d (the user's focus stays where it was). A
//     command that fails to start therefore shows up as a dead pane, which
//     Status reports with its exit status.
//   - remain-on-exit keeps a crashed teammate's pane on screen with its last
//     output ("Pane is dead"), for Capture and for the user; the lead
//     removes it with Kill once it has read what it needs. tmux before 3.4
//     may drop the last output of a command that exits the moment it wrote
//     it, so a teammate's own log stays the reliable record. Before tmux 3.0
//     the option exists only per window, so there the whole window keeps
//     its dead panes.
//   - Kill does not trust the hang-up alone. It notes the pane's process
//     (a session leader: tmux runs each pane's command in a new session),
//     kills the pane, and then sends SIGTERM and, after ServerConfig.Grace,
//     SIGKILL to whatever still runs in that session, until nothing does or
//     the context ends (zombies count as gone). A dead pane's pid is never signalled: it may belong to someone
//     else by then. Processes that start their own session are out of
//     reach, as in internal/proc.
//   - Alive is true only while tmux says the pane is not dead and its
//     process runs; a pane or server that no longer exists is "not alive",
//     not an error. Liveness of the teammate itself (heartbeats) is the
//     team layer's business.
//   - A private server reads no configuration file, so the user's
//     ~/.tmux.conf cannot change pane behaviour, and StartServer refuses a
//     socket on which a server already answers (ErrServerExists) rather
//     than adopt and later kill it. Its environment is ours (or
//     ServerConfig.Env) without TMUX and TMUX_PANE; panes inherit it.
//     Close lists the panes, kills the server, stops what survives of the
//     panes' sessions, waits for the server process to go and removes the
//     socket.
//   - A private server does not outlive the process that started it. The
//     session's first pane is a keeper (`sh -c`, polling `kill -0` once a
//     second) that, when that process is gone, gives the other panes up to
//     10 s to end on their own and then runs `tmux kill-server`, so a
//     SIGKILLed Cohort leaves no daemon behind holding its teammates'
//     panes. The keeper is a pane like any other: Close stops it with the
//     rest. Splits from the session split the keeper's pane.
//   - Socket paths longer than 107 bytes fail with an error that says so:
//     that is the limit of a Unix socket address on Linux.
//
// Concurrency: a Server is safe for concurrent use. tmux serialises the
// commands of all clients, and every step that must not be interleaved
// runs as one chained command. Panes split concurrently from one target
// each halve it; give PaneSpec.Layout (Tiled) to rebalance the window in the
// same chain as each split, so the target never shrinks below tmux's
// minimum size.
//
// This package is Unix-only; process checks use /proc on Linux and kill(2)
// elsewhere.
package tmux
