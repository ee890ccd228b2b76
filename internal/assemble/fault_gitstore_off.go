//go:build !faultinject_gitstore

package assemble

// faultGitStore is false: see fault_gitstore.go.
const faultGitStore = false
