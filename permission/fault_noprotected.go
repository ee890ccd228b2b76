//go:build faultinject_noprotected

package permission

// faultNoProtected empties the protected-path list, and lets the allow
// rules of a file obeyed by approval reach past the working directories
// (approved.go): see fault_readonly.go.
const faultNoProtected = true
