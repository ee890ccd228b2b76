// Package roles holds the command line's end-to-end tests of what each
// kind of agent is shown: its tools, its system prompt and first request
// (golden files under testdata), what it is told when it calls a tool its
// role lacks, and under both agent models (the seed's and Claude Code
// 2.1.332's, behind flags). It has tests only; the harness is
// internal/clitest.
package roles
