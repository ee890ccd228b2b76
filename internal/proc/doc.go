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
//   - On Linux the leader is observed with waitid(WNOWAIT) and reaped only
//     after the rest of the group is gone, so the group id can never be
//     recycled while we still signal it. Liveness of the group is read from
//     /proc and ignores zombies, because the init process of a container may
//     never reap orphans.
//   - Output is read through pipes we own rather than os/exec's copying, so
//     a grandchild that escaped the group and still holds the pipe cannot
//     hang Wait: after the group is gone, output is drained for at most
//     Command.Drain and then the pipes are closed.
//   - The child never inherits our stdin: a nil Command.Stdin is /dev/null.
//   - A non-zero exit is not an error: Wait reports it in Exit, and the
//     caller decides what it means. Errors are for failures to start or
//     observe the process.
//
// This package is Unix-only; the group handling is tested on Linux.
package proc
