//go:build !faultinject

package assemble

// A release build injects no fault: see fault_on.go.
const faultGitStore = false
