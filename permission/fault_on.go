//go:build faultinject

package permission

import "os"

// Fault injection, for test builds only. Built with the tag faultinject,
// the environment variable COHORT_FAULTINJECT names one check of this
// package the binary makes wrong on purpose, so that a test can show the
// layers below it still hold (internal/cli/e2e/faults):
//
//   - "readonly": the read-only analysis answers "read-only" for every
//     Bash command, redirections included;
//   - "noprotected": the protected-path list is empty, and a file obeyed
//     only by approval may allow paths outside the working directories.
//
// One tag for every fault, chosen when the binary starts, so CI builds
// the module once for all of them. A release build lacks the tag: then
// both are constants false (fault_off.go) and the variable is never read.
var (
	faultReadOnly    = os.Getenv("COHORT_FAULTINJECT") == "readonly"
	faultNoProtected = os.Getenv("COHORT_FAULTINJECT") == "noprotected"
)
