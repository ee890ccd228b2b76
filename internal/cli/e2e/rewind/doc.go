// Package rewind holds the command line's end-to-end tests of checkpoints
// and `cohort rewind`: a team's edits undone byte for byte, the user's
// edits and git state left alone, bad checkpoints refused. It has tests
// only; the harness is internal/clitest.
package rewind
