// Package proc runs child processes so that none outlives its owner: each
// starts in its own process group, is stopped with close-stdin → SIGTERM to
// the group → SIGKILL to the group, and is always reaped. It is the one place
// Cohort starts processes (the Bash tool, hooks, git, tmux, ripgrep).
//
// Decisions the spec leaves open:
//
//   - The group dies with its leader. When the started process exits, any
//     other members of its process group (a shell's `cmd &` children) get the
//     same SIGTERM → SIGKILL treatment before Wait returns, unless
//     Command.KeepGroup is set. Long-running work belongs in a background
//     task, not in a child that quietly outlives the call. A process that
//     leaves the group (setsid, setpgid) is out of reach by design.
//   - A group is never signalled by a number that may already belong to
//     someone else. On Linux 6.9 and later the leader's pidfd (opened right
//     after the start, while it cannot have been reaped) addresses the
//     group: pidfd_send_signal with PIDFD_SIGNAL_PROCESS_GROUP reaches the
//     group by the kernel's identity of the leader's pid, even after the
//     leader is reaped and its number handed out again. So the leader is
//     reaped as soon as it exits, and the group check is one signal 0
//     through the pidfd: ESRCH — nothing left, zombie or not, the usual
//     case — ends it without reading /proc. When members are left, /proc is
//     read to tell running ones from zombies (the init process of a
//     container may never reap orphans); they exist, so the number is still
//     theirs while it is read.
//   - On older kernels (and where pidfds are unavailable) the leader is
//     observed with waitid(WNOWAIT) and reaped only after the rest of the
//     group is gone, so the group id can never be recycled while we signal it
//     by number, and every check reads the stat file of every process (three
//     system calls each). Reaping first and asking kill(-pgid, 0) would make
//     the usual case cheap there too, but it opens a window: once the number
//     is free, a new process could take it and lead a group of its own
//     between the check and a signal (pid_max is 32768 on many machines, so
//     the numbers wrap under a busy fork load), and that group would be
//     killed. That window is not opened.
//   - Output is read through pipes we own rather than os/exec's copying, so
//     a grandchild that escaped the group and still holds the pipe cannot
//     hang Wait: after the group is gone, output is drained for at most
//     Command.Drain and then the pipes are closed.
//   - A Command with a Launcher is started by another process (the
//     sandbox's launcher, package sandbox), which forks it and reaps it;
//     everything else is the same. Its group is addressed only through the
//     pidfd the launcher hands back (it is not our child and may be in
//     another pid namespace, so /proc cannot be scanned for it), which
//     needs pidfd process-group signals: Start refuses a Launcher on older
//     kernels rather than signal numbers that may be someone else's.
//   - The child never inherits our stdin: a nil Command.Stdin is /dev/null.
//   - A non-zero exit is not an error: Wait reports it in Exit, and the
//     caller decides what it means. Errors are for failures to start or
//     observe the process.
//
// This package is Unix-only; the group handling is tested on Linux.
package proc
