// Package clitest is the harness of the command line's end-to-end tests
// (internal/cli/e2e/...): a Harness runs the CLI in-process, or as the
// built binary, in a temporary HOME against the fake Messages API
// (llm/fakeapi), with helpers to script the fake model, decode what the
// CLI printed, and watch the processes it started.
//
// It is test support, not API: only test packages import it, and every
// helper fails the *testing.T it is given rather than returning an error.
// The tests are split into packages by area so that go test runs them as
// separate binaries, in parallel; a helper lives here once two of them
// use it, and next to its tests otherwise.
package clitest
