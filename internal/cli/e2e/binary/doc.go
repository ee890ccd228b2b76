// Package binary holds the command line's end-to-end tests of the built
// cohort binary as a process: SIGINT, a SIGKILLed lead and its resume, the
// children it must not leave behind, the TUI in tmux, and the flags Claude
// Code's users pass. It has tests only; the harness is internal/clitest.
package binary
