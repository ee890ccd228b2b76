//go:build faultinject_gitstore

package assemble

// Fault injection, for test builds only: with the tag faultinject_gitstore
// the search of git's store (gitStore.find) answers "nothing denied" for
// every repository, so that a test can show what holds below it
// (internal/cli/e2e/faults TestFaultInjectedGitStore): the sandbox's own
// look-up of the denied files' contents in the store (package sandbox).
// A release build lacks the tag, and then it is false.
const faultGitStore = true
