// Package agents holds the command line's end-to-end tests of subagents and
// background agents: parallel synchronous agents, notifications (the chaos
// loop), TaskStop, output files, auto-backgrounding, coalesced wake-ups. It
// has tests only; the harness is internal/clitest.
package agents
