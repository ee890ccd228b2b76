// Package worktree holds the command line's end-to-end tests of worktree
// isolation: agents, forks and the lead in worktrees, their settings and
// hooks, startup sweeps, a project without git. It has tests only; the
// harness is internal/clitest.
package worktree
