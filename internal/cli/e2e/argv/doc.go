// Package argv holds the command line's end-to-end test of how it reads
// argv, against Claude Code itself: a table of command lines as Claude
// Code's users type them (variadic options before and after the prompt,
// repeated, in the --flag=value form, ended by another option or by --,
// a value that starts with "-", a prompt read as an option's value), each
// run through Cohort's command line in-process against the fake API and
// compared with what the real Claude Code did with the same line.
//
// What a line did is read where it lands, not from either parser: the
// prompt the model received, the tools it was offered, the beta headers
// sent, which probe calls the permission layer refused (the scripted
// model calls Bash with "go test" and "go build" and Write in its first
// turn), the working directories and MCP servers system/init lists, the
// warning about a swallowed prompt, and, for a line that stops before any
// model call, why (an unknown option, a variadic option without a value,
// no prompt).
//
// Claude Code's side is recorded once into testdata/claude-code.json, by
// running the real claude binary of the release Cohort speaks
// (cohort.ProtocolVersion, installed from npm by internal/npmtest) on
// every line. After changing the table, or moving to a new release,
// re-record it with
//
//	COHORT_RECORD_ARGV=1 go test ./internal/cli/e2e/argv -run TestRecordClaudeCode
//
// The test fails when the recording's table or release is not the
// current one. It has tests only; the harness is internal/clitest.
package argv
