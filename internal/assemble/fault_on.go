//go:build faultinject

package assemble

import "os"

// Fault injection, for test builds only: built with the tag faultinject
// and run with COHORT_FAULTINJECT=gitstore, the search of git's store
// (gitStore.find) answers "nothing denied" for every repository, so that
// a test can show what holds below it (internal/cli/e2e/faults
// TestFaultInjectedGitStore): the sandbox's own look-up of the denied
// files' contents in the store (package sandbox). A release build lacks
// the tag; then it is a constant false (fault_off.go).
var faultGitStore = os.Getenv("COHORT_FAULTINJECT") == "gitstore"
