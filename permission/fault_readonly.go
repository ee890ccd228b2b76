//go:build faultinject_readonly

package permission

// Fault injection, for test builds only: with the tag
// faultinject_readonly the read-only analysis answers "read-only" for
// every Bash command, redirections included; with faultinject_noprotected
// the permission layer's protected-path list is empty. Each makes one
// check of this package wrong on purpose, so that a test can show the
// sandbox below it still holds (internal/cli's TestFaultInjectedLayers).
// A release build has neither tag, and then both are false.
const faultReadOnly = true
