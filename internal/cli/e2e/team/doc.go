// Package team holds the command line's end-to-end tests of teams: in-
// process and tmux teammates, mixed teams, a teammate in a worktree, a
// killed teammate or lead, an orphaned team, the team's task list. It has
// tests only; the harness is internal/clitest.
package team
