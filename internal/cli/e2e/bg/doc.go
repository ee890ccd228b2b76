// Package bg holds the command line's end-to-end tests of background
// sessions: cohort --bg on the built binary with a scripted model, and
// agents, logs, stop, kill, rm and attach on what it started (package
// bgsession keeps the registry). It has tests only; the harness is
// internal/clitest.
package bg
