// Package permissions holds the command line's end-to-end tests of
// permissions: modes and rules, the sandbox against a hostile model, hooks
// and hook scripts, a project agent's mode escalation, WebFetch's loopback
// refusal. It has tests only; the harness is internal/clitest.
package permissions
